"""The beam tree's labels on a projector: none overlaps another label, a node or an edge, none is shortened or cut,
and none shows SentencePiece's "▁". Boxes are computed from the figure's own data, in px of a figure drawn at the
width it was laid out for (the page's least: wider, the columns only spread), with a conservative character width
(0.65 em; the font averages about 0.5) and a line 1.3 em tall."""

from __future__ import annotations

import html
from pathlib import Path

import plotly.graph_objects as go
import pytest

import tests.engine.test_beam_tree_figure as figure_tests
from explorer.decoding import BeamTrace
from explorer.figures.beam_tree import beam_tree_figure
from tests.engine.test_beam_tree_figure import LABELS

REPO = Path(__file__).resolve().parents[2]
CHAR_EM, LINE_EM, PAD = 0.65, 1.3, 1.0
LONG = ["</s>", "<s>", "\u2581Fahrradfahrerin", "\u2581ein", "\u2581Motorradrennen"]


def flat_search(beam: int = 4, steps: int = 6) -> BeamTrace:
    """The flat table's search trace: 2k candidates a step, all rows used."""
    return figure_tests.flat_search(beam, steps).trace


Box = tuple[float, float, float, float]  # left, top, right, bottom in px


def boxes(fig: go.Figure, width: int) -> tuple[list[tuple[str, Box]], list[Box], list[tuple[tuple, tuple, float]]]:
    """(label text, box), node boxes and edge segments ((x0, y0), (x1, y1), line width), all in px of the plot."""
    layout = fig.layout
    plot_w = width - layout.margin.l - layout.margin.r
    plot_h = layout.height - layout.margin.t - layout.margin.b
    (x0, x1), (y0, y1) = layout.xaxis.range, layout.yaxis.range

    def px(x: float, y: float) -> tuple[float, float]:
        return (x - x0) / (x1 - x0) * plot_w, (y1 - y) / (y1 - y0) * plot_h

    labels, nodes, edges = [], [], []
    for t in fig.data:
        if t.mode == "text":
            size = t.textfont.size
            for x, y, text in zip(t.x, t.y, t.text, strict=True):
                assert t.textposition == "middle right"
                left, mid = px(x, y)
                plain = html.unescape(text)
                box = (
                    left - PAD,
                    mid - LINE_EM * size / 2,
                    left + CHAR_EM * size * len(plain) + PAD,
                    mid + LINE_EM * size / 2,
                )
                labels.append((plain, box))
        elif t.mode == "markers":
            widths = t.marker.line.width
            for x, y, size, line in zip(t.x, t.y, t.marker.size, widths, strict=True):
                cx, cy = px(x, y)
                r = size / 2 + line
                nodes.append((cx - r, cy - r, cx + r, cy + r))
        elif t.mode == "lines":
            points = list(zip(t.x, t.y, strict=True))
            for a, b in zip(points, points[1:], strict=False):
                if None not in a and None not in b:
                    edges.append((px(*a), px(*b), t.line.width))
    return labels, nodes, edges


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def crosses(segment: tuple[tuple, tuple, float], box: Box) -> bool:
    """Whether a segment of the given line width passes through `box` (sampled every half px)."""
    (ax, ay), (bx, by), line = segment
    grown = (box[0] - line / 2, box[1] - line / 2, box[2] + line / 2, box[3] + line / 2)
    n = int(max(abs(bx - ax), abs(by - ay)) * 2) + 2
    return any(
        grown[0] < ax + (bx - ax) * i / n < grown[2] and grown[1] < ay + (by - ay) * i / n < grown[3]
        for i in range(n + 1)
    )


def assert_readable(fig: go.Figure, width: int) -> None:
    labels, nodes, edges = boxes(fig, width)
    plot_w = width - fig.layout.margin.l - fig.layout.margin.r
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert labels, "the tree draws its labels"
    for i, (text, box) in enumerate(labels):
        assert "\u2581" not in text and not text.endswith("\u2026"), f"{text!r}: drawn whole, without the marker"
        assert box[0] >= 0 and box[2] <= plot_w and box[1] >= 0 and box[3] <= plot_h, f"{text!r} cut: {box}"
        for other, other_box in labels[i + 1 :]:
            assert not overlap(box, other_box), f"label {text!r} overlaps label {other!r}"
        for node in nodes:
            assert not overlap(box, node), f"label {text!r} overlaps a node at {node}"
        for edge in edges:
            assert not crosses(edge, box), f"an edge crosses label {text!r}"


# The page lays the tree out for the main area's least width: 600 px beside the sidebar (1024 and 1280 px
# windows), 835 in presenter mode; narrower, for a figure in a column.
@pytest.mark.parametrize("width", [460, 600, 835])
@pytest.mark.parametrize("labels", [LABELS, LONG], ids=["short", "long"])
@pytest.mark.parametrize("upto", [0, 2, None])
def test_no_label_overlaps_a_label_node_or_edge(width: int, labels: list[str], upto: int | None) -> None:
    trace = flat_search()
    best = trace.steps[-1].candidates[0]
    fig = beam_tree_figure(trace, labels, upto_step=upto, highlight=(best.token,), max_height=470, width=width)
    assert_readable(fig, width)


def test_a_wide_beam_grows_the_figure_rather_than_let_rows_touch() -> None:
    trace = flat_search(beam=8, steps=4)
    fig = beam_tree_figure(trace, LONG, max_height=470, width=600)
    assert fig.layout.height > 470
    assert_readable(fig, 600)


def test_the_shipped_models_tree_is_readable() -> None:
    from explorer.checkpoint import load_checkpoint
    from explorer.examples import beam_example
    from explorer.inference import translate

    folder = REPO / "checkpoints" / "multi30k-en-de"
    checkpoint = load_checkpoint(folder)
    sentence = beam_example(folder)
    assert sentence is not None
    (result,) = translate(checkpoint.model, checkpoint.tokenizer, [sentence], beam_size=4, with_trace=True, n_best=4)
    assert result.trace is not None
    pieces = lambda token: checkpoint.tokenizer.pieces([token])[0]  # noqa: E731
    for width in (600, 835):
        for upto in range(len(result.trace.steps)):
            fig = beam_tree_figure(
                result.trace, pieces, upto_step=upto, highlight=tuple(result.output_ids), max_height=470, width=width
            )
            assert_readable(fig, width)
