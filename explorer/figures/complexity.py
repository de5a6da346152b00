"""Figures for Table 1 (Section 4, "Why Self-Attention"): operation counts, measurements, path lengths.

Pure builders: numbers in, a plotly figure out; axis titles, units and titles are part of the figure.
Each layer type keeps one colour (from the theme's palette, readable on light and dark) in all three.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.complexity.measure import (
    FORMULA_OF,
    MEASURED_LABELS,
    MEASURED_LAYERS,
    MEMORY_MEASURES,
    SELF_ATTENTION_EXPLICIT,
)
from explorer.complexity.table1 import (
    crossover_n,
    operations,
    path_length,
    path_nodes,
    restricted_crossover_n,
)
from explorer.figures.memo import remembered
from explorer.figures.theme import FONT_SIZE, NARROW_TITLE_PX, apply_theme, color, legend_below, rgba, wrap_words
from explorer.i18n import translate
from explorer.paper import (
    CONV_CONTIGUOUS,
    CONV_DILATED,
    CONVOLUTIONAL,
    FORMULAS,
    LAYER_LABELS,
    LAYER_TYPES,
    PATH_LAYERS,
    RECURRENT,
    RESTRICTED,
    SELF_ATTENTION,
)

# One colour per layer type, the same in all three figures (the theme's palette reads on light and dark).
COLORS: dict[str, str] = {
    SELF_ATTENTION: color(0),
    SELF_ATTENTION_EXPLICIT: color(5),
    RECURRENT: color(2),
    CONVOLUTIONAL: color(3),
    CONV_CONTIGUOUS: color(3),
    CONV_DILATED: color(1),
    RESTRICTED: color(4),
}
MUTED = "rgba(128, 128, 128, 0.55)"


def metric_labels(lang: str = "en") -> dict[str, str]:
    """The measured quantities, key -> axis label in `lang` (the page's choice of what to plot)."""
    return {
        "forward_ms": translate("forward time (ms)", lang),
        "train_ms": translate("forward + backward time (ms)", lang),
        "memory_mb": translate("memory (MB)", lang),
    }


METRICS: dict[str, str] = metric_labels()


def _name(label: str, lang: str) -> str:
    """A layer name from explorer.complexity (Table 1's rows, the measured modules) in `lang`; the Korean is
    in figures.po under the English name."""
    return translate(label, lang)


def _marker_line(x: float, y_low: float, y_high: float, name: str, hue: str) -> go.Scatter:
    """A vertical dashed marker drawn as a trace (shapes on log axes are easy to misplace)."""
    return go.Scatter(
        x=[x, x],
        y=[y_low, y_high],
        mode="lines",
        name=name,
        line=dict(color=hue, dash="dash", width=2),
        hoverinfo="name",
        showlegend=False,  # its note names it on the plot; the legend keeps its rows for the four layer types
    )


def _marker_note(fig: go.Figure, x: float, text: str, *, left: bool, top: bool) -> None:
    """A note beside a vertical marker at `x` (a log axis), clear of its line by a few pixels: to its left or
    right, at the top or the bottom of the plot area. The two markers' notes sit at opposite ends, so they never
    meet however close n = r and n = d come on a narrow plot."""
    fig.add_annotation(
        x=float(np.log10(x)),
        xref="x",
        y=0.98 if top else 0.02,
        yref="paper",
        text=text,
        showarrow=False,
        xanchor="right" if left else "left",
        xshift=-8 if left else 8,
        yanchor="top" if top else "bottom",
        font=dict(size=FONT_SIZE - 2),
    )


def _decades(values: Sequence[float] | np.ndarray) -> list[int]:
    """The log10 range of whole decades around `values`: a log axis ticked at its decades only (`dtick=1`)
    then shows at least two labelled ticks."""
    array = np.asarray(values, dtype=float)
    positive = array[np.isfinite(array) & (array > 0)]
    low, high = float(np.log10(positive.min())), float(np.log10(positive.max()))
    return [int(np.floor(low)), max(int(np.ceil(high)), int(np.floor(low)) + 1)]


def n_grid(n: int, d: int, points: int = 200) -> np.ndarray:
    """Sequence lengths for `operations_figure`: log-spaced from 1 past both n and d, so the n = d
    crossing and the chosen n are both on the plot."""
    return np.geomspace(1, 4 * max(n, d), points)


@remembered()
def operations_figure(
    n_values: Sequence[float] | np.ndarray,
    d: int,
    k: int = 3,
    r: int = 16,
    *,
    highlight_n: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """Table 1's complexity per layer against n, log-log, for the four layer types.

    A dashed marker at n = d, where self-attention (n²·d) and recurrence (n·d²) cost the same: to its left
    self-attention is cheaper (Section 4). A dotted marker at n = r, beyond which restricted self-attention
    (r·n·d) is cheaper than full self-attention. `highlight_n` puts a dot on every curve at that n (the
    values in the table).
    """
    n_array = np.asarray(n_values, dtype=float)
    assert n_array.ndim == 1 and len(n_array) > 0 and (n_array >= 1).all(), (
        f"n_values must be a non-empty 1-D array of n >= 1, got {n_array!r}"
    )
    fig = go.Figure()
    all_ops = []
    operations_word = translate("operations", lang)
    for layer in LAYER_TYPES:
        ops = np.array([operations(layer, n, d, k, r) for n in n_array])
        all_ops.append(ops)
        fig.add_trace(
            go.Scatter(
                x=n_array,
                y=ops,
                mode="lines",
                name=f"{_name(LAYER_LABELS[layer], lang)}  {FORMULAS[layer].complexity}",
                line=dict(color=COLORS[layer], width=4),
                hovertemplate=f"{_name(LAYER_LABELS[layer], lang)}<br>n = %{{x:,.0f}}<br>{operations_word} = %{{y:.3s}}"
                "<extra></extra>",
            )
        )
    low, high = min(o.min() for o in all_ops), max(o.max() for o in all_ops)
    n_cross = crossover_n(d)
    fig.add_trace(
        _marker_line(
            n_cross, low, high, translate("n = d = {d}: self-attention = recurrent", lang, d=d), COLORS[RECURRENT]
        )
    )
    # On two lines: on one, a narrow plot's note reached over the n = r marker and the curves.
    _marker_note(
        fig, n_cross, translate("self-attention cheaper", lang) + f"<br>\u2190 n = d = {d}", left=True, top=False
    )
    n_restricted = restricted_crossover_n(r)
    restricted_marker = _marker_line(n_restricted, low, high, f"n = r = {r}", COLORS[RESTRICTED])
    restricted_marker.line.dash = "dot"
    fig.add_trace(restricted_marker)
    _marker_note(fig, n_restricted, f"n = r = {r}", left=False, top=True)
    if highlight_n is not None:
        fig.add_trace(
            go.Scatter(
                x=[highlight_n] * len(LAYER_TYPES),
                y=[operations(layer, highlight_n, d, k, r) for layer in LAYER_TYPES],
                mode="markers",
                name=f"n = {highlight_n}",
                showlegend=False,  # the dots mark the table's values under the figure
                marker=dict(size=14, color=[COLORS[layer] for layer in LAYER_TYPES], line=dict(width=2, color=MUTED)),
                text=[_name(LAYER_LABELS[layer], lang) for layer in LAYER_TYPES],
                hovertemplate=f"%{{text}}<br>n = %{{x}}<br>{operations_word} = %{{y:,.0f}}<extra></extra>",
            )
        )
    # Ticks at the powers of ten only: plotly labels the 2s and 5s between them at three quarters of the tick
    # size, under 14 px. The axis title on two lines: on one it runs past a 1024 px window's plot height.
    fig.update_xaxes(type="log", dtick=1, title_text=translate("sequence length n", lang))
    fig.update_yaxes(
        type="log", dtick=1, title_text=wrap_words(translate("operations per layer (constants dropped)", lang), 300, 18)
    )
    apply_theme(
        fig,
        title=wrap_words(translate("Complexity per layer (Table 1), d = {d}, k = {k}, r = {r}", lang, d=d, k=k, r=r)),
        height=640,
    )
    return legend_below(fig)


def _formula_curve(layer: str, ns: np.ndarray, depths: np.ndarray, d: int, kernel: int) -> np.ndarray:
    """Operation count of the measured module: the Table 1 row it follows, times its stacked layers."""
    return np.array([operations(FORMULA_OF[layer], int(n), d, kernel) for n in ns]) * depths


@remembered()
def measured_figure(
    rows: Sequence[dict[str, Any]], metric: str = "forward_ms", *, formula_overlay: bool = True, lang: str = "en"
) -> go.Figure:
    """Measured time or memory (rows from `measure_layers`) against n per layer, on log-log axes.

    With `formula_overlay` and a time metric, each layer also gets a dashed curve of its Table 1 operation
    count scaled to meet the measurement at the largest n, so the shapes can be compared (the constant in
    front of an O() is not the paper's claim, the growth is). The LSTM's time grows with n although each of
    its n sequential steps is small: the O(n) sequential operations.
    """
    assert metric in METRICS, f"metric must be one of {tuple(METRICS)}, got {metric!r}"
    rows = [row for row in rows if row.get(metric) is not None]
    assert rows, f"no measured rows with a value for {metric!r}"
    d, kernel, device = rows[0]["d"], rows[0]["kernel"], rows[0]["device"]
    metric_label = metric_labels(lang)[metric]
    y_title = metric_label
    if metric == "memory_mb" and rows[0]["memory_measure"] in MEMORY_MEASURES:
        y_title = _name(MEMORY_MEASURES[rows[0]["memory_measure"]], lang)
    fig = go.Figure()
    for layer in MEASURED_LAYERS:
        layer_rows = sorted((row for row in rows if row["layer"] == layer), key=lambda row: row["n"])
        if not layer_rows:
            continue
        ns = np.array([row["n"] for row in layer_rows], dtype=float)
        values = np.array([row[metric] for row in layer_rows], dtype=float)
        depths = np.array([row["depth"] for row in layer_rows], dtype=float)
        fig.add_trace(
            go.Scatter(
                x=ns,
                y=values,
                mode="lines+markers",
                name=_name(MEASURED_LABELS[layer], lang),
                legendgroup=layer,
                line=dict(color=COLORS[layer], width=4),
                marker=dict(size=10),
                customdata=depths,
                hovertemplate=(
                    f"{_name(MEASURED_LABELS[layer], lang)}<br>n = %{{x}}<br>{metric_label} = %{{y:.3g}}"
                    f"<br>" + translate("layers", lang) + " = %{customdata}<extra></extra>"
                ),
            )
        )
        if formula_overlay and metric != "memory_mb":
            curve = _formula_curve(layer, ns, depths, d, kernel)
            scaled = curve * (values[-1] / curve[-1])
            formula = FORMULAS[FORMULA_OF[layer]].complexity
            if layer == CONV_DILATED:
                formula = f"log_k(n)·{formula}"
            fig.add_trace(
                go.Scatter(
                    x=ns,
                    y=scaled,
                    mode="lines",
                    name=translate("{formula}, scaled", lang, formula=formula),
                    legendgroup=layer,
                    line=dict(color=COLORS[layer], width=2, dash="dash"),
                    hoverinfo="skip",
                )
            )
    fig.update_xaxes(type="log", dtick=1, title_text=translate("sequence length n", lang))
    fig.update_yaxes(
        type="log",
        dtick=1,
        range=_decades(np.concatenate([np.asarray(trace.y, dtype=float) for trace in fig.data])),
        title_text=y_title,
    )
    apply_theme(
        fig,
        title=wrap_words(
            translate(
                "Measured on {device}: {metric}, d = {d}, k = {k}",
                lang,
                device=device,
                metric=metric_label,
                d=d,
                k=kernel,
            )
        ),
        height=680,
    )
    return legend_below(fig)


def _receptive_field(layer: str, target: int, levels: int, n: int, k: int, r: int) -> tuple[list[int], list[int]]:
    """Outline (x, level) of the input positions that reach `target` at the top level within `levels` layers."""
    if layer == SELF_ATTENTION:
        left, right = [0], [n - 1]
    elif layer == RESTRICTED:
        left = [max(0, target - (levels - level) * r) for level in range(levels + 1)]
        right = [min(n - 1, target + (levels - level) * r) for level in range(levels + 1)]
    else:  # causal convolutions: reach k-1 per layer (contiguous) or k^L - 1 after L dilated layers
        reach = [
            (levels - level) * (k - 1) if layer == CONV_CONTIGUOUS else k ** (levels - level) - 1
            for level in range(levels + 1)
        ]
        left = [max(0, target - reach_l) for reach_l in reach]
        right = [target] * (levels + 1)
    if layer == SELF_ATTENTION:
        return [0, n - 1, target, 0], [0, 0, 1, 0]
    xs = left + right[::-1] + [left[0]]
    ys = list(range(levels + 1)) + list(range(levels, -1, -1)) + [0]
    return xs, ys


@remembered()
def path_length_figure(i: int, j: int, n: int, k: int = 3, r: int = 16, *, lang: str = "en") -> go.Figure:
    """How many layers (recurrent: steps) connect positions i and j, per architecture (Section 4, Table 1).

    On top: the hop counts as bars. Under them: one drawing per architecture, input at the bottom (level 0), one
    shortest path from the earlier to the later position in bold, and the shaded region of inputs the later
    position can see in that many layers: self-attention joins them directly; the RNN walks a chain of
    hidden states; contiguous convolutions climb a cone k - 1 positions per layer; dilated ones a cone that
    widens k-fold per layer; restricted self-attention r positions per layer.
    """
    assert n >= 2 and 0 <= i < n and 0 <= j < n, f"need 0 <= i, j < n with n >= 2, got i={i}, j={j}, n={n}"
    hops = {layer: path_length(layer, i, j, k, r) for layer in PATH_LAYERS}
    titles = [
        f"{_name(LAYER_LABELS[layer], lang)}: " + _hops(hops[layer], layer == RECURRENT, lang) for layer in PATH_LAYERS
    ]
    drawings = len(PATH_LAYERS)
    # One column, the bars on top and a drawing per architecture under them, each the page's full width: side
    # by side, the bars' names took half of a 1024 px window and the titles ran into each other.
    bar_px, drawing_px, gap_px = 40 * drawings + 90, 150, 80
    height = bar_px + drawing_px * drawings + gap_px * drawings + 200
    fig = make_subplots(
        rows=drawings + 1,
        cols=1,
        row_heights=[bar_px] + [drawing_px] * drawings,
        vertical_spacing=gap_px / height,
        subplot_titles=[
            wrap_words(title, NARROW_TITLE_PX, FONT_SIZE)
            for title in [translate("layers / steps between the two positions", lang), *titles]
        ],
    )
    labels = [_name(LAYER_LABELS[layer], lang) for layer in PATH_LAYERS]
    fig.add_trace(
        go.Bar(
            x=[hops[layer] for layer in PATH_LAYERS],
            y=labels,
            orientation="h",
            name=translate("path length", lang),
            marker_color=[COLORS[layer] for layer in PATH_LAYERS],
            text=[hops[layer] for layer in PATH_LAYERS],
            textposition="outside",
            textfont=dict(size=FONT_SIZE),
            cliponaxis=False,
            showlegend=False,
            hovertemplate="%{y}: %{x}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_xaxes(range=[0, max(hops.values()) * 1.2 + 1], row=1, col=1)

    source, target = min(i, j), max(i, j)
    show_dots = n <= 128
    for row, layer in enumerate(PATH_LAYERS, start=2):
        hue, nodes = COLORS[layer], path_nodes(layer, i, j, k, r)
        levels = max(node[1] for node in nodes) if len(nodes) > 1 else 1
        if layer != RECURRENT and hops[layer] > 0:
            xs, ys = _receptive_field(layer, target, levels, n, k, r)
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    fill="toself",
                    mode="lines",
                    line=dict(width=0),
                    fillcolor=rgba(hue, 0.2),
                    showlegend=False,
                    hoverinfo="skip",
                ),
                row=row,
                col=1,
            )
        if show_dots:
            for level in sorted({0, levels}):
                fig.add_trace(
                    go.Scatter(
                        x=list(range(n)),
                        y=[level] * n,
                        mode="markers",
                        marker=dict(size=6, color=MUTED),
                        showlegend=False,
                        hoverinfo="skip",
                    ),
                    row=row,
                    col=1,
                )
        fig.add_trace(
            go.Scatter(
                x=[x for x, _ in nodes],
                y=[level for _, level in nodes],
                mode="lines+markers",
                name=_name(LAYER_LABELS[layer], lang),
                line=dict(color=hue, width=4),
                marker=dict(size=11, color=hue),
                showlegend=False,
                hovertemplate=translate("position", lang)
                + " %{x}, "
                + translate("level", lang)
                + f" %{{y}}<extra>{_name(LAYER_LABELS[layer], lang)}</extra>",
            ),
            row=row,
            col=1,
        )
        ends = [(source, 0, f"{source}")] + ([(target, levels, f"{target}")] if len(nodes) > 1 else [])
        fig.add_trace(
            go.Scatter(
                x=[x for x, _, _ in ends],
                y=[y for _, y, _ in ends],
                mode="text",
                text=[text for _, _, text in ends],
                textposition=["bottom center", "top center"][: len(ends)],
                textfont=dict(size=FONT_SIZE - 2),
                cliponaxis=False,
                showlegend=False,
                hoverinfo="skip",
            ),
            row=row,
            col=1,
        )
        # Position numbers under the last drawing only (every drawing spans the same positions), so the space
        # between two drawings holds the path's end labels and the next title.
        fig.update_xaxes(
            range=[-0.5 - 0.03 * n, n - 0.5 + 0.03 * n],
            showgrid=False,
            zeroline=False,
            showticklabels=row == drawings + 1,
            row=row,
            col=1,
        )
        fig.update_yaxes(
            range=[-0.6 * levels, 1.6 * levels],
            tickvals=[0, levels],
            ticktext=[
                translate("input", lang),
                translate("hidden", lang) if layer == RECURRENT else translate("layer {n}", lang, n=levels),
            ],
            tickfont=dict(size=FONT_SIZE - 2),
            showgrid=False,
            zeroline=False,
            row=row,
            col=1,
        )
    fig.update_xaxes(title_text=translate("position (from 0)", lang), row=drawings + 1, col=1)
    apply_theme(
        fig,
        title=wrap_words(
            translate(
                "Path length between positions {i} and {j} (n = {n}, k = {k}, r = {r})", lang, i=i, j=j, n=n, k=k, r=r
            )
        ),
        height=height,
    )
    # A line's more room above the bars' subplot title: plotly centres the title in the top margin.
    return fig.update_layout(margin_t=fig.layout.margin.t + 40)


def _hops(count: int, recurrent: bool, lang: str) -> str:
    """'1 layer', '3 layers', '5 steps' in `lang`."""
    if recurrent:
        return translate("{n} step", lang, n=count) if count == 1 else translate("{n} steps", lang, n=count)
    return translate("{n} layer", lang, n=count) if count == 1 else translate("{n} layers", lang, n=count)
