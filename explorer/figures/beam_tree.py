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
from explorer.figures.memo import remembered
from explorer.figures.theme import FONT_FAMILY, FONT_SIZE, HOVER_SIZE, TICK_SIZE
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
_MARGIN = {"l": 20, "r": 20, "t": 124, "b": 60}
# Node labels at the tick size (16 px; 18 in presenter mode), each to the right of its node; a column holds a
# node, the gap, the widest label of the figure, and room for the edges to its children.
LABEL_SIZE = TICK_SIZE
_RADIUS = (STYLE["finished"][2] + 6) / 2  # the largest marker: a finished star on the highlighted path
_GAP = 6  # px between a marker and its label, and between a label and its edges
_EDGE_PX = 40  # the least horizontal run of the edges between a column's labels and the next column's nodes
_ROW_PX = (44, 36)  # px between two rows: wished for, and the least (two largest markers and some air)
MARKER = "\u2581"  # SentencePiece's word-start marker: not drawn on the tree (the pieces are the model's words)
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


# Beam's step slider and node clicks come back to trees already drawn; with its pieces given as a list (a value,
# unlike a function) a tree is built once and copied after.
@remembered()
def beam_tree_figure(
    trace: BeamTrace,
    token_labels: TokenLabels,
    upto_step: int | None = None,
    highlight: tuple[int, ...] | None = None,
    lang: str = "en",
    max_height: int | None = None,
    width: int = 600,
) -> go.Figure:
    """Draw `trace` as a tree: one node per candidate of steps 0..`upto_step` (all when None; negative:
    only the start node), its token piece to its right (without the "▁" marker), hover showing log-probabilities
    and the length-normalized score. `highlight` (a hypothesis' tokens) thickens that hypothesis' path.

    Laid out for a figure `width` px wide (its least width on the page: drawn wider, the columns only spread):
    the x axis counts px, each step a column as wide as a node, the widest label and the edges' run, so no label
    meets another label, a node or an edge and none is shortened. Where the steps up to `upto_step` do not all
    fit, the figure shows the last ones that do (the axis title says which). Rows are at least `_ROW_PX[1]` apart,
    so a figure asked for at most `max_height` px grows past it rather than let rows touch."""
    nodes = _layout(trace)
    last_step = len(trace.steps) - 1
    upto = last_step if upto_step is None else min(upto_step, last_step)
    hover = _labeler(token_labels)
    text = _labeler(token_labels, drawn=True)
    widths = _column_widths(nodes, text)
    plot_width = width - _MARGIN["l"] - _MARGIN["r"]
    first = _first_column(widths, upto + 1, plot_width)  # the leftmost column shown: tokens generated
    visible = [n for n in nodes if n.step <= upto and n.x >= first]
    left = {x: _RADIUS + _GAP / 2 + sum(widths[first:x]) for x in range(first, len(widths))}
    x_of = {n.id: left[n.x] for n in visible}
    by_id = {n.id: n for n in visible}
    on_path = _path_ids(nodes, highlight)

    fig = go.Figure()
    for status in ("pruned", "kept", "finished"):
        edges = [n for n in visible if n.status == status and n.parent_id in by_id]
        dash = "dot" if status == "pruned" else "solid"
        fig.add_trace(_edges(edges, by_id, x_of, text, widths, EDGE[status], 2, dash, f"edges: {status}"))
    if on_path:
        path = [n for n in visible if n.id in on_path and n.parent_id in by_id]
        fig.add_trace(_edges(path, by_id, x_of, text, widths, HIGHLIGHT, 6, "solid", "highlight"))
    for status in ("start", "pruned", "kept", "finished"):
        group = [n for n in visible if n.status == status]
        fig.add_trace(_markers(group, x_of, status, hover, on_path, lang))
    fig.add_trace(_labels(visible, x_of, text, on_path))

    title = translate("Beam search, beam size {k}, α = {alpha}", lang, k=trace.beam_size, alpha=f"{trace.alpha:g}")
    # Where the search stands goes on a second line: one line with both runs past a 1024 px window.
    if upto < last_step:
        title += "<br>" + translate("step {step} of {steps}", lang, step=upto + 1, steps=last_step + 1)
    elif trace.stop_reason:
        title += "<br>" + translate("stopped: {reason}", lang, reason=stop_reason_text(trace.stop_reason, lang))
    shown = sorted({n.x for n in visible})
    x_title = translate("tokens generated (decoding step)", lang)
    margin = dict(_MARGIN)
    if first > 0:  # the steps before did not fit: said under the axis, where the step numbers start late
        x_title += "<br>" + translate(
            "steps {first} to {last} of {steps}", lang, first=first, last=upto + 1, steps=last_step + 1
        )
        margin["b"] += int(1.3 * FONT_SIZE)
    max_y = max((abs(n.y) for n in nodes), default=0.0)
    row_px = float(_ROW_PX[0])
    if max_height is not None and max_y > 0:
        room = max_height - margin["t"] - margin["b"] - 2 * _RADIUS - 8
        row_px = max(float(_ROW_PX[1]), min(row_px, room / (2 * max_y)))
    edge = (_RADIUS + 4) / row_px  # room for the outer rows' markers and labels, in rows
    height = int(round(margin["t"] + margin["b"] + (2 * max_y + 2 * edge) * row_px))
    fig.update_layout(
        # Body-size title: two lines of it and the legend's row fit the top margin.
        title={"text": title, "font": {"size": FONT_SIZE}},
        font={"size": FONT_SIZE, "family": FONT_FAMILY},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        height=height,
        margin=margin,
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
            "title": {"text": x_title},
            "tickvals": [left[x] for x in shown],
            "ticktext": [str(x) for x in shown],
            "tickfont": {"size": TICK_SIZE},
            "range": [0, plot_width],
            "gridcolor": "rgba(128, 128, 128, 0.2)",
            "zeroline": False,
            "fixedrange": True,
        },
        yaxis={"visible": False, "range": [-max_y - edge, max_y + edge], "fixedrange": True},
    )
    return fig


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


def label_px(text: str) -> float:
    """A drawn label's width, on the safe side: 0.65 em a character (the theme's sans-serif averages about 0.5;
    Hangul and other wide scripts, 1 em); a column is laid out for its widest label by this."""
    return sum(1.0 if ord(ch) >= 0x1100 else 0.65 for ch in text) * LABEL_SIZE


def _column_widths(nodes: list[_Node], text: Callable[[int], str]) -> list[float]:
    """px from each column's nodes to the next column's (a column per number of tokens generated): a marker, the
    column's widest drawn label (`label_px`) between two gaps, and the edges' run."""
    widest = [0.0] * (max((n.x for n in nodes), default=0) + 1)
    for n in nodes:
        widest[n.x] = max(widest[n.x], label_px(html.unescape(text(n.token))))
    return [2 * _RADIUS + 2 * _GAP + w + _EDGE_PX for w in widest]


def _first_column(widths: list[float], last: int, plot_width: float) -> int:
    """The leftmost column such that columns first..`last` fit `plot_width` px (the last one needs no edge run);
    the last column alone where even two do not fit (a label is never shortened)."""
    first, used = last, widths[last] - _EDGE_PX + _GAP / 2
    while first > 0 and used + widths[first - 1] <= plot_width:
        first -= 1
        used += widths[first]
    return first


def _label_end(node: _Node, x_of: dict[int, float], text: Callable[[int], str]) -> float:
    """The x (px) where `node`'s drawn label ends."""
    return x_of[node.id] + _RADIUS + _GAP + label_px(html.unescape(text(node.token)))


def _edges(
    children: list[_Node],
    by_id: dict[int, _Node],
    x_of: dict[int, float],
    text: Callable[[int], str],
    widths: list[float],
    color: str,
    width: float,
    dash: str,
    name: str,
) -> go.Scatter:
    """Each child's edge: from its parent's label end along the parent's row to where the column's labels end,
    then to the child's node; so no edge crosses a label."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for child in children:
        parent = by_id[child.parent_id]  # type: ignore[index]
        turn = x_of[parent.id] + widths[parent.x] - _RADIUS - _EDGE_PX
        xs += [_label_end(parent, x_of, text) + _GAP, turn, x_of[child.id], None]
        ys += [parent.y, parent.y, child.y, None]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        line={"color": color, "width": width, "dash": dash},
        hoverinfo="skip",
        showlegend=False,
        name=name,
    )


def _markers(
    group: list[_Node], x_of: dict[int, float], status: str, label: Callable[[int], str], on_path: set[int], lang: str
) -> go.Scatter:
    """One status' nodes as markers, each node's whole prefix in the hover (the drawn labels are `_labels`)."""
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
        x=[x_of[n.id] for n in group],
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


def _labels(visible: list[_Node], x_of: dict[int, float], text: Callable[[int], str], on_path: set[int]) -> go.Scatter:
    """Every node's token label to the right of the largest marker, in one text layer after all markers; no
    hover or clicks of its own (hoverinfo "skip"), so a click reaches the node, whose id the page reads."""
    return go.Scatter(
        x=[x_of[n.id] + _RADIUS + _GAP for n in visible],
        y=[n.y for n in visible],
        mode="text",
        name="labels",
        text=[text(n.token) for n in visible],
        textposition="middle right",
        textfont={"size": LABEL_SIZE},
        cliponaxis=False,
        hoverinfo="skip",
        showlegend=False,
    )


def _labeler(token_labels: TokenLabels, *, drawn: bool = False) -> Callable[[int], str]:
    """Token id -> piece, HTML-escaped for plotly (which reads "<s>" as a strike-through tag); `drawn`: without
    SentencePiece's "▁" (kept when the piece is nothing else)."""
    if callable(token_labels):
        name = token_labels
    else:
        pieces = list(token_labels)
        name = lambda token: pieces[token] if 0 <= token < len(pieces) else f"<{token}>"  # noqa: E731
    if not drawn:
        return lambda token: html.escape(name(token))
    return lambda token: html.escape(name(token).replace(MARKER, "") or name(token))
