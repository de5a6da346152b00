"""The beam search as a tree, left to right.

Pure functions over the plain-data `BeamTrace` of explorer/decoding/hypotheses.py (Section 6.1's beam search):
x is the number of tokens generated, each column holds the 2k candidates of one step, grouped under their
parent. Kept hypotheses are solid blue, pruned ones small and grey, finished ones green stars. Node positions come
from the whole trace, so walking through it with `upto_step` adds nodes without moving the others.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from explorer.decoding.hypotheses import BeamTrace
from explorer.decoding.policy import STOP_BEAM_FULL, STOP_BOUND, STOP_MAX_LEN, STOP_NO_LIVE
from explorer.figures.theme import FONT_FAMILY, FONT_SIZE, HOVER_SIZE, TICK_SIZE, text_width_px
from explorer.i18n import translate

TokenLabels = Callable[[int], str] | Sequence[str]

# status -> (marker colour, symbol, size). The token labels take the page theme's text colour: no single
# status hue reaches 4.5:1 on both the light and the dark page.
STYLE = {
    "start": ("#8b5cf6", "diamond", 20),
    "kept": ("#3b82f6", "circle", 18),
    "finished": ("#22c55e", "star", 26),
    "pruned": ("rgba(148, 163, 184, 0.5)", "circle", 12),
}


def _legend(status: str, lang: str) -> str:
    names = {
        "start": translate("start (BOS)", lang),
        "kept": translate("kept in the beam", lang),
        "finished": translate("finished (EOS)", lang),
        "pruned": translate("pruned", lang),
    }
    return names[status]


def stop_reason_text(reason: str, lang: str = "en") -> str:
    """Why the search stopped (`BeamTrace.stop_reason`, an English constant of the engine), in `lang`."""
    reasons = {
        STOP_NO_LIVE: translate("no live hypothesis left", lang),
        STOP_BEAM_FULL: translate("the beam is full of finished hypotheses", lang),
        STOP_BOUND: translate("no live hypothesis can beat the finished ones", lang),
        STOP_MAX_LEN: translate("max_len reached", lang),
    }
    return reasons.get(reason, reason)


HIGHLIGHT = "#f59e0b"
# Room for a node's label above it: the largest marker (a finished star on the highlighted path) and a line
# of label text, with some air; presenter mode draws the text an eighth larger.
_LABEL_ABOVE_PX = (STYLE["finished"][2] + 6) / 2 + 1.6 * FONT_SIZE
_MARKER_BELOW_PX = (STYLE["finished"][2] + 6) / 2 + 4
_MARGIN = {"l": 20, "r": 20, "t": 124, "b": 60}
_RIGHT_OF_LAST = 0.7  # x-axis room after the last step, in steps
# Node labels at the tick size (16 px; 18 in presenter mode): a tree's columns are narrow, and the pieces long.
LABEL_SIZE = TICK_SIZE
EDGE = {"kept": "rgba(59, 130, 246, 0.6)", "finished": "rgba(34, 197, 94, 0.7)", "pruned": "rgba(148, 163, 184, 0.45)"}


@dataclass(frozen=True)
class _Node:
    id: int
    parent_id: int | None
    step: int  # the step that produced it; -1 for the start node
    x: int  # tokens generated
    y: float
    token: int
    tokens: tuple[int, ...]
    token_log_prob: float
    log_prob: float
    score: float
    status: str


def beam_tree_figure(
    trace: BeamTrace,
    token_labels: TokenLabels,
    upto_step: int | None = None,
    highlight: tuple[int, ...] | None = None,
    lang: str = "en",
    max_height: int | None = None,
    width: int | None = None,
) -> go.Figure:
    """Draw `trace` as a tree: one node per candidate of steps 0..`upto_step` (all when None; negative:
    only the start node), labeled with its token piece, hover showing log-probabilities and the
    length-normalized score. `highlight` (a hypothesis' tokens) thickens that hypothesis' path.

    The figure is at most `max_height` px tall; the y range leaves the top row's labels room inside the plot,
    so none is cut at the plot's edge or runs into the legend above it. Drawn `width` px wide, a label longer than
    its step's column is shortened with "…" (the hover keeps it whole): at 1024 px a tree of 8 steps has columns
    of about 60 px, and "▁Fahrrad" over one node ran into "▁einem" over the next."""
    nodes = _layout(trace)
    last_step = len(trace.steps) - 1
    label = _labeler(token_labels)
    # The width estimate is an upper one (theme.text_width_px): labels as wide as the column keep some air.
    text = label if width is None else _labeler(token_labels, _column_px(width, last_step + 1))
    upto = last_step if upto_step is None else min(upto_step, last_step)
    visible = [n for n in nodes if n.step <= upto]
    by_id = {n.id: n for n in nodes}
    on_path = _path_ids(nodes, highlight)

    fig = go.Figure()
    for status in ("pruned", "kept", "finished"):
        edges = [n for n in visible if n.status == status and n.parent_id is not None]
        fig.add_trace(
            _edges(
                edges,
                by_id,
                EDGE[status],
                width=2,
                dash="dot" if status == "pruned" else "solid",
                name=f"edges: {status}",
            )
        )
    if on_path:
        fig.add_trace(
            _edges(
                [n for n in visible if n.id in on_path and n.parent_id is not None],
                by_id,
                HIGHLIGHT,
                width=6,
                dash="solid",
                name="highlight",
            )
        )
    for status in ("start", "pruned", "kept", "finished"):
        group = [n for n in visible if n.status == status]
        fig.add_trace(_markers(group, status, label, on_path, lang))
    fig.add_trace(_labels(visible, text, on_path))

    title = translate("Beam search, beam size {k}, α = {alpha}", lang, k=trace.beam_size, alpha=f"{trace.alpha:g}")
    # Where the search stands goes on a second line: one line with both runs past a 1024 px window.
    if upto < last_step:
        title += "<br>" + translate("step {step} of {steps}", lang, step=upto + 1, steps=last_step + 1)
    elif trace.stop_reason:
        title += "<br>" + translate("stopped: {reason}", lang, reason=stop_reason_text(trace.stop_reason, lang))
    max_x = last_step + 1
    max_y = max((abs(n.y) for n in nodes), default=0.0)
    height = int(max(360, 70 * (2 * max_y + 1) + 160))
    if max_height is not None:
        height = min(height, max_height)
    fig.update_layout(
        # Body-size title: two lines of it and the legend's row fit the top margin.
        title={"text": title, "font": {"size": FONT_SIZE}},
        font={"size": FONT_SIZE, "family": FONT_FAMILY},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        height=height,
        margin=_MARGIN,
        legend={
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.0,
            "xanchor": "left",
            "x": 0.0,
            "font": {"size": TICK_SIZE},
        },
        hoverlabel={"font": {"size": HOVER_SIZE, "family": FONT_FAMILY}},
        xaxis={
            "title": {"text": translate("tokens generated (decoding step)", lang)},
            "tickvals": list(range(max_x + 1)),
            "tickfont": {"size": TICK_SIZE},
            "range": [-0.5, max_x + _RIGHT_OF_LAST],
            "gridcolor": "rgba(128, 128, 128, 0.2)",
            "zeroline": False,
        },
        yaxis={"visible": False, "range": y_range(max_y, height - _MARGIN["t"] - _MARGIN["b"])},
    )
    return fig


def y_range(max_y: float, plot_px: float) -> list[float]:
    """The y range for rows at -max_y..max_y in a plot `plot_px` tall, with `_LABEL_ABOVE_PX` free above the
    top row and `_MARKER_BELOW_PX` below the bottom one. With u px per row the range is
    [-max_y - below/u, max_y + above/u] and spans plot_px/u rows, so u = (plot_px - above - below) / (2 max_y)."""
    if max_y <= 0:  # one row (only the start node): in the middle, one unit a pixel
        return [-plot_px / 2, plot_px / 2]
    spare = max(plot_px - _LABEL_ABOVE_PX - _MARKER_BELOW_PX, plot_px / 3)  # a tiny plot still shows its rows
    per_row = spare / (2 * max_y)
    return [-max_y - _MARKER_BELOW_PX / per_row, max_y + _LABEL_ABOVE_PX / per_row]


def _layout(trace: BeamTrace) -> list[_Node]:
    """Every node of the trace with its position: a column per step, children grouped under parents."""
    assert trace.steps, "expected a trace with at least one step"
    root = trace.steps[0].live[0]
    nodes = [_Node(root.id, None, -1, 0, 0.0, root.token, (), 0.0, 0.0, 0.0, "start")]
    placed = {root.id: nodes[0]}
    for step in trace.steps:
        order = sorted(range(len(step.candidates)), key=lambda i: (-placed[step.candidates[i].parent_id].y, i))
        center = (len(order) - 1) / 2
        for row, i in enumerate(order):
            c = step.candidates[i]
            parent = placed[c.parent_id]
            node = _Node(
                c.id,
                c.parent_id,
                step.step,
                step.step + 1,
                center - row,
                c.token,
                parent.tokens + (c.token,),
                c.token_log_prob,
                c.log_prob,
                c.score,
                c.status,
            )
            placed[c.id] = node
            nodes.append(node)
    return nodes


def _path_ids(nodes: list[_Node], highlight: tuple[int, ...] | None) -> set[int]:
    if not highlight:
        return set()
    path = {n.id for n in nodes if n.tokens == tuple(highlight)[: len(n.tokens)]}
    return path if len(path) > 1 else set()


def _edges(
    children: list[_Node], by_id: dict[int, _Node], color: str, width: float, dash: str, name: str
) -> go.Scatter:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for child in children:
        parent = by_id[child.parent_id]  # type: ignore[index]
        xs += [parent.x, child.x, None]
        ys += [parent.y, child.y, None]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        line={"color": color, "width": width, "dash": dash},
        hoverinfo="skip",
        showlegend=False,
        name=name,
    )


def _markers(group: list[_Node], status: str, label: Callable[[int], str], on_path: set[int], lang: str) -> go.Scatter:
    """One status' nodes as markers, each token's whole `label` in the hover (the drawn labels are `_labels`)."""
    color, symbol, size = STYLE[status]
    legend = _legend(status, lang)
    token, prefix, score = translate("token", lang), translate("prefix", lang), translate("score", lang)
    hover = [
        f"<b>{' '.join(label(t) for t in n.tokens) or label(n.token)}</b><br>"
        f"log p({token}) = {n.token_log_prob:.3f}<br>log p({prefix}) = {n.log_prob:.3f}<br>"
        f"{score} = log p / lp({len(n.tokens)}) = {n.score:.3f}<br>{legend}"
        for n in group
    ]
    return go.Scatter(
        x=[n.x for n in group],
        y=[n.y for n in group],
        mode="markers",
        name=legend,
        cliponaxis=False,
        marker={
            "color": color,
            "symbol": symbol,
            "size": [_marker_px(n, on_path) for n in group],
            "line": {"color": HIGHLIGHT, "width": [3 if n.id in on_path else 0 for n in group]},
        },
        customdata=[[n.id, -1 if n.parent_id is None else n.parent_id, n.step, status] for n in group],
        hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
    )


def _marker_px(node: _Node, on_path: set[int]) -> int:
    """A node's marker size: its status' size, 6 px larger on the highlighted path."""
    return STYLE[node.status][2] + (6 if node.id in on_path else 0)


def _labels(visible: list[_Node], text: Callable[[int], str], on_path: set[int]) -> go.Scatter:
    """Every node's token label over it, as `text` draws it, in one layer above all markers: drawn with each
    status' markers, a label under a later status' marker was hidden (at 1024x768 the highlighted path's finished
    star, 32 px, covered "▁Fah…" over the node below it). Transparent markers of the nodes' sizes keep each label
    just above its own marker, as plotly places the text of a marker. No hover or clicks of its own
    (hoverinfo "skip"): a click on a label reaches the node under it, whose id the page's click handler reads."""
    return go.Scatter(
        x=[n.x for n in visible],
        y=[n.y for n in visible],
        mode="markers+text",
        marker={"size": [_marker_px(n, on_path) for n in visible], "color": "rgba(0,0,0,0)"},
        name="labels",
        text=[text(n.token) for n in visible],
        textposition="top center",
        textfont={"size": LABEL_SIZE},
        cliponaxis=False,  # the y range leaves labels room; a label a pixel over the edge still shows
        hoverinfo="skip",
        showlegend=False,
    )


def _column_px(width: int, steps: int) -> float:
    """The px between two steps' nodes in a figure `width` px wide showing steps 0..`steps`."""
    return (width - _MARGIN["l"] - _MARGIN["r"]) / (steps + 0.5 + _RIGHT_OF_LAST)


def _fit(text: str, width: float) -> str:
    """`text`, or its longest start that fits `width` px with "…" after it (at least one character and "…")."""
    if text_width_px(text, LABEL_SIZE) <= width:
        return text
    for end in range(len(text) - 1, 1, -1):
        if text_width_px(text[:end] + "\u2026", LABEL_SIZE) <= width:
            return text[:end] + "\u2026"
    return text[:1] + "\u2026"


def _labeler(token_labels: TokenLabels, width: float | None = None) -> Callable[[int], str]:
    """Token id -> piece (fitted to `width` px when given); HTML-escaped for plotly, which reads "<s>" as a
    strike-through tag (escaped after fitting, so that "…" never cuts an entity)."""
    if callable(token_labels):
        name = token_labels
    else:
        pieces = list(token_labels)
        name = lambda token: pieces[token] if 0 <= token < len(pieces) else f"<{token}>"  # noqa: E731
    if width is None:
        return lambda token: html.escape(name(token))
    return lambda token: html.escape(_fit(name(token), width))
