"""The beam tree figure and n-best table (explorer/figures/beam_tree.py), without a browser."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from explorer.decoding import BeamTrace, beam_search
from explorer.decoding.policy import STOP_BEAM_FULL, STOP_BOUND, STOP_MAX_LEN, STOP_NO_LIVE
from explorer.figures.beam_tree import beam_tree_figure, stop_reason_text

EOS, BOS, A, B, C = 0, 1, 2, 3, 4
LABELS = ["</s>", "<s>", "a", "b", "c"]
TABLE = {  # (EOS) finishes at once; (A A EOS) wins after the length penalty
    (): {EOS: 0.3, A: 0.7},
    (A,): {A: 0.95, B: 0.05},
    (A, A): {EOS: 0.4, C: 0.6},
    (A, B): {EOS: 1.0},
}


class TableScorer:
    def __init__(self) -> None:
        self.prefixes: list[tuple[int, ...]] = [()]

    def step(self, last_tokens: torch.Tensor, step: int) -> torch.Tensor:
        if step > 0:
            self.prefixes = [p + (t,) for p, t in zip(self.prefixes, last_tokens.tolist(), strict=False)]
        probs = np.zeros((len(self.prefixes), len(LABELS)), dtype=np.float32)
        for row, prefix in enumerate(self.prefixes):
            for token, p in TABLE.get(prefix, {EOS: 1.0}).items():
                probs[row, token] = p
        return torch.from_numpy(probs).log()

    def reorder(self, rows: torch.Tensor) -> None:
        self.prefixes = [self.prefixes[r] for r in rows.tolist()]


@pytest.fixture(scope="module")
def trace() -> BeamTrace:
    (result,) = beam_search(TableScorer(), 1, 2, BOS, EOS, max_len=10, trace=True)
    assert result.trace is not None
    return result.trace


def node_traces(fig: go.Figure) -> list[go.Scatter]:
    return [t for t in fig.data if t.mode == "markers"]


def label_trace(fig: go.Figure) -> go.Scatter:
    (labels,) = [t for t in fig.data if t.name == "labels"]
    return labels


def nodes_by_status(fig: go.Figure) -> dict[str, list[tuple[int, ...]]]:
    found: dict[str, list] = {}
    for t in node_traces(fig):
        for custom in t.customdata:
            found.setdefault(custom[3], []).append(tuple(custom[:3]))
    return found


@pytest.mark.parametrize("upto_step", [None, -1, 0, 1, 2])
def test_one_node_per_trace_node_up_to_the_step(trace: BeamTrace, upto_step: int | None) -> None:
    fig = beam_tree_figure(trace, LABELS, upto_step=upto_step)
    last = len(trace.steps) - 1 if upto_step is None else upto_step
    expected = {0} | {c.id for s in trace.steps if s.step <= last for c in s.candidates}
    shown = [int(custom[0]) for t in node_traces(fig) for custom in t.customdata]
    assert sorted(shown) == sorted(expected)
    statuses = {(int(c[0]), c[3]) for t in node_traces(fig) for c in t.customdata}
    assert statuses == {(0, "start")} | {(c.id, c.status) for s in trace.steps if s.step <= last for c in s.candidates}


def test_statuses_are_styled_apart(trace: BeamTrace) -> None:
    fig = beam_tree_figure(trace, LABELS)
    styles = {t.customdata[0][3]: (t.marker.color, t.marker.symbol) for t in node_traces(fig) if t.customdata}
    assert set(styles) == {"start", "kept", "pruned", "finished"}
    assert len(set(styles.values())) == 4
    assert styles["finished"][1] == "star"
    assert "rgba" in styles["pruned"][0] and styles["pruned"][0] != styles["kept"][0]
    assert fig.layout.paper_bgcolor == "rgba(0,0,0,0)" and fig.layout.plot_bgcolor == "rgba(0,0,0,0)"
    assert fig.layout.xaxis.title.text and fig.layout.title.text


def test_labels_hover_and_positions(trace: BeamTrace) -> None:
    fig = beam_tree_figure(trace, lambda t: LABELS[t].upper())
    texts = set(label_trace(fig).text)
    assert {"&lt;S&gt;", "A", "B", "C", "&lt;/S&gt;"} <= texts  # escaped: plotly text is HTML
    hovers = " ".join(h for t in node_traces(fig) for h in t.hovertext)
    assert "score" in hovers and "log p" in hovers
    full = {int(c[0]): (x, y) for t in node_traces(fig) for c, x, y in zip(t.customdata, t.x, t.y, strict=False)}
    partial = {
        int(c[0]): (x, y)
        for t in node_traces(beam_tree_figure(trace, LABELS, upto_step=0))
        for c, x, y in zip(t.customdata, t.x, t.y, strict=False)
    }
    assert all(full[i] == partial[i] for i in partial), "walking step by step must not move nodes"
    column = {s.step: {full[c.id][0] for c in s.candidates} for s in trace.steps}
    assert all(len(xs) == 1 for xs in column.values()), "one column per step"
    assert [column[s.step] for s in trace.steps] == sorted(column.values(), key=min), "left to right"


def test_highlight_marks_one_path(trace: BeamTrace) -> None:
    fig = beam_tree_figure(trace, LABELS, highlight=(A, A, EOS))
    (path,) = [t for t in fig.data if t.name == "highlight"]
    assert len([x for x in path.x if x is None]) == 3  # three edges: <s>-a, a-a, a-</s>
    widths = [w for t in node_traces(fig) for w in t.marker.line.width]
    assert sum(w > 0 for w in widths) == 4
    assert not [t for t in beam_tree_figure(trace, LABELS).data if t.name == "highlight"]


# --- what a projector and a Korean reader see -------------------------------------------------------


def flat_search(beam: int = 4, steps: int = 6):
    """A search over a flat table (every token as likely as the next, end of sentence from step 2): 2k
    candidates a step, all rows used. Returns the search's one result (its trace and hypotheses)."""

    class Flat(TableScorer):
        def step(self, last_tokens: torch.Tensor, step: int) -> torch.Tensor:
            super().step(last_tokens, step)
            probs = np.full((len(self.prefixes), len(LABELS)), 0.2, dtype=np.float32)
            probs[:, EOS] = 0.2 if step >= 2 else 1e-6
            return torch.from_numpy(probs / probs.sum(1, keepdims=True)).log()

    (result,) = beam_search(Flat(), 1, beam, BOS, EOS, max_len=steps, trace=True)
    assert result.trace is not None
    return result


def wide_search() -> tuple[BeamTrace, tuple[int, ...]]:
    """Beam 4 over the flat table: eight candidates a step, so four rows above the middle."""
    result = flat_search()
    return result.trace, tuple(result.hypotheses[0].tokens)


def test_the_title_and_legend_fit_the_top_margin(trace: BeamTrace) -> None:
    fig = beam_tree_figure(trace, LABELS, max_height=470)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) == 2 and "stopped:" in lines[1], "the stop reason on its own line"
    title_px = len(lines) * 1.3 * fig.layout.title.font.size
    legend_px = 1.6 * fig.layout.font.size
    assert fig.layout.margin.t >= title_px + legend_px


@pytest.mark.parametrize("reason", [STOP_NO_LIVE, STOP_BEAM_FULL, STOP_BOUND, STOP_MAX_LEN])
def test_every_stop_reason_has_korean(reason: str) -> None:
    assert stop_reason_text(reason, "en") == reason
    korean = stop_reason_text(reason, "ko")
    assert re.search(r"[\uac00-\ud7a3]", korean), korean


def test_the_stop_reason_follows_the_figure_language(trace: BeamTrace) -> None:
    assert trace.stop_reason
    english = beam_tree_figure(trace, LABELS, lang="en").layout.title.text
    korean = beam_tree_figure(trace, LABELS, lang="ko").layout.title.text
    assert trace.stop_reason in english
    assert trace.stop_reason not in korean and stop_reason_text(trace.stop_reason, "ko") in korean


def test_labels_are_drawn_after_every_marker_and_let_clicks_through(trace):
    """Labels were drawn with their status' markers, so a later status' marker covered them. They are one text
    layer after every marker trace, one label per node on its node's row and to its right, with no hover or click
    of their own (a click reaches the node, whose id the page reads from customdata)."""
    fig = beam_tree_figure(trace, LABELS, highlight=(A, A, EOS))
    labels = label_trace(fig)
    assert fig.data[-1] is labels and all(t.text is None for t in node_traces(fig))
    assert labels.hoverinfo == "skip" and labels.showlegend is False and labels.mode == "text"
    assert labels.textposition == "middle right"
    nodes = sorted((y, x) for t in node_traces(fig) for x, y in zip(t.x, t.y, strict=True))
    drawn = sorted(zip(labels.y, labels.x, strict=True))
    assert [y for y, _ in drawn] == [y for y, _ in nodes] and all(
        lx > nx for (_, lx), (_, nx) in zip(drawn, nodes, strict=True)
    )
