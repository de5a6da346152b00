"""Attention figures: one head as a matrix, every head as a grid of thumbnails, and a BertViz-style view.

Conventions shared by all three: rows / the left column are queries (the positions doing the looking),
columns / the right column are keys (the positions looked at), both in token order from the top. Axes
are indexed by position with the token text as tick labels, so a token that occurs twice ('\u2581a' ...
'\u2581a') keeps two rows instead of being merged as a categorical label would be.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.memo import remembered
from explorer.figures.theme import (
    CELL_TEXT_SIZE,
    NARROW_FIGURE_WIDTH,
    TICK_SIZE,
    WEIGHT_COLORSCALE,
    apply_theme,
    color,
    colorbar,
    escape_labels,
    numbers_fit,
    rgba,
)
from explorer.i18n import translate

_ROW_PX = 34  # height per token row in the single-head matrix and the head view


def weight_axis(title: str, top: float = 1.0) -> dict[str, object]:
    """A shared colour axis for panels of attention weights (0 to `top`), its colour bar titled `title`
    (translated by the caller): `fig.update_layout(coloraxis=weight_axis(...))`."""
    return dict(colorscale=WEIGHT_COLORSCALE, cmin=0.0, cmax=top, colorbar=colorbar(title))


def _check(
    weights: np.ndarray, ndim: int, query_labels: Sequence[str], key_labels: Sequence[str], shape_doc: str
) -> np.ndarray:
    w = np.asarray(weights)
    assert w.ndim == ndim, f"expected weights {shape_doc}, got shape {w.shape}"
    q, k = w.shape[-2:]
    assert len(query_labels) == q, f"expected {q} query labels, got {len(query_labels)}"
    assert len(key_labels) == k, f"expected {k} key labels, got {len(key_labels)}"
    return w


def _pair_labels(query_labels: Sequence[str], key_labels: Sequence[str]) -> np.ndarray:
    """(q, k, 2) array of escaped [query label, key label] for every cell, for hover text."""
    ql, kl = escape_labels(query_labels), escape_labels(key_labels)
    out = np.empty((len(ql), len(kl), 2), dtype=object)
    out[:, :, 0] = np.asarray(ql, dtype=object)[:, None]
    out[:, :, 1] = np.asarray(kl, dtype=object)[None, :]
    return out


def index_axis(labels: Sequence[str], *, reverse: bool = False) -> dict[str, Any]:
    """Axis over positions 0..n-1 labelled with the tokens; reversed puts position 0 at the top."""
    n = len(labels)
    return dict(
        tickmode="array",
        tickvals=list(range(n)),
        ticktext=escape_labels(labels),
        range=[n - 0.5, -0.5] if reverse else [-0.5, n - 0.5],
        showgrid=False,
        zeroline=False,
    )


def pair_heatmap(
    weights: np.ndarray, query_labels: Sequence[str], key_labels: Sequence[str], **trace: Any
) -> go.Heatmap:
    """A heatmap of weights (q, k) over positions 0..k-1 (x) and 0..q-1 (y) whose hover template can name each
    cell's query and key tokens as %{customdata[0]} and %{customdata[1]}; `trace` goes to `go.Heatmap`."""
    q, k = np.shape(weights)
    return go.Heatmap(
        z=weights, x=np.arange(k), y=np.arange(q), customdata=_pair_labels(query_labels, key_labels), **trace
    )


# Translate's head, layer and family switches come back to matrices already drawn: a copy of one costs far less
# than building it through plotly's object model again.
@remembered()
def attention_heatmap(
    weights: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    title: str | None = None,
    zmax: float | None = 1.0,
    x_title: str | None = None,
    y_title: str | None = None,
    show_values: bool | None = False,
    width: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """One head's attention matrix, weights (q, k) = softmax(QK^T / sqrt(d_k)) of Eq. 1.

    Rows are queries from top to bottom, columns are keys. The colour range is fixed to [0, zmax]
    (default [0, 1]) so heads are compared on the same scale; zmax=None scales to this matrix's maximum.
    Hover shows "query -> key: weight" with four decimals. show_values=True writes the weights in the cells
    when they fit at a readable size in a figure `width` px wide (default: the narrowest page column),
    None does so whenever they fit, False never. Axis titles default to "key" and "query" in `lang`.
    """
    w = _check(weights, 2, query_labels, key_labels, "(q, k)")
    q, k = w.shape
    height = max(380, _ROW_PX * q + 180)
    if show_values is not False:
        show_values = numbers_fit(
            q,
            k,
            height=height,
            title=bool(title),
            row_label_chars=max(map(len, map(str, query_labels)), default=1),
            width=width or NARROW_FIGURE_WIDTH,
        )
    fig = go.Figure(
        pair_heatmap(
            w,
            query_labels,
            key_labels,
            hovertemplate="%{customdata[0]} \u2192 %{customdata[1]}: %{z:.4f}"
            "<br>" + translate("position", lang) + " %{y} \u2192 %{x}<extra></extra>",
            colorscale=WEIGHT_COLORSCALE,
            zmin=0.0,
            zmax=float(w.max()) if zmax is None else float(zmax),
            colorbar=colorbar(translate("weight", lang)),
            texttemplate="%{z:.2f}" if show_values else None,
            textfont=dict(size=CELL_TEXT_SIZE),
            xgap=1,
            ygap=1,
        )
    )
    # Key labels that do not fit upright slant at 45° before they stand vertical (plotly's default tries 30°, which
    # rarely clears the next label, then 90°): a slanted label takes about 0.7 of the height a vertical one does,
    # and a figure capped for the first screen gives that height to the rows.
    fig.update_xaxes(
        title_text=translate("key", lang) if x_title is None else x_title,
        autotickangles=[0, 45, 90],
        **index_axis(key_labels),
    )
    fig.update_yaxes(
        title_text=translate("query", lang) if y_title is None else y_title, **index_axis(query_labels, reverse=True)
    )
    apply_theme(fig, title=title, height=height)
    return fig


def attention_grid(
    weights: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Every head of every layer, weights (L, H, q, k), as an L x H grid of thumbnails.

    Layer 1 is the top row, Head 1 the left column (Section 3.2.2: h heads run in parallel in each of
    the N layers). All cells share one colour axis fixed to [0, 1]. There is exactly one heatmap trace
    per cell, in layer-major order (trace index = layer * H + head, meta={"layer", "head"}, 0-based).
    Hover names the layer, head, query, key and weight.
    """
    w = _check(weights, 4, query_labels, key_labels, "(layers, heads, q, k)")
    n_layers, n_heads, q, k = w.shape
    fig = make_subplots(
        rows=n_layers,
        cols=n_heads,
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=min(0.02, 0.2 / max(n_heads - 1, 1)),
        vertical_spacing=min(0.03, 0.3 / max(n_layers - 1, 1)),
        column_titles=[translate("Head {n}", lang, n=h + 1) for h in range(n_heads)],
    )
    for layer in range(n_layers):
        for head in range(n_heads):
            name = translate("Layer {layer}, head {head}", lang, layer=layer + 1, head=head + 1)
            fig.add_trace(
                pair_heatmap(
                    w[layer, head],
                    query_labels,
                    key_labels,
                    coloraxis="coloraxis",
                    name=name,
                    meta=dict(layer=layer, head=head),
                    hovertemplate=f"{name}<br>%{{customdata[0]}} \u2192 %{{customdata[1]}}: %{{z:.4f}}<extra></extra>",
                ),
                row=layer + 1,
                col=head + 1,
            )
        fig.update_yaxes(title_text=translate("Layer {n}", lang, n=layer + 1), row=layer + 1, col=1)
    fig.update_xaxes(showticklabels=False, ticks="", showgrid=False, zeroline=False, range=[-0.5, k - 0.5])
    fig.update_yaxes(showticklabels=False, ticks="", showgrid=False, zeroline=False, range=[q - 0.5, -0.5])
    fig.update_layout(coloraxis=weight_axis(translate("weight", lang)))
    apply_theme(fig, title=title, height=max(360, 150 * n_layers + 120))
    return fig


def _bucket_segments(
    w: np.ndarray, threshold: float, levels: int
) -> list[tuple[int, list[float | None], list[float | None]]]:
    """Group the (query i -> key j) segments with w[i, j] >= threshold into `levels` weight buckets.

    Returns [(level, xs, ys)] with level in 1..levels; xs/ys are 'None'-separated polylines from
    (0, -i) to (1, -j). One trace per bucket keeps the trace count at most heads * levels.
    """
    level = np.clip(np.ceil(w * levels), 1, levels).astype(int)
    out = []
    for lv in range(1, levels + 1):
        qi, kj = np.nonzero((w >= threshold) & (level == lv))
        if qi.size == 0:
            continue
        xs = np.tile(np.array([0.0, 1.0, np.nan]), qi.size)
        ys = np.column_stack([-qi.astype(float), -kj.astype(float), np.full(qi.size, np.nan)]).ravel()
        out.append((lv, [None if np.isnan(x) else x for x in xs], [None if np.isnan(y) else y for y in ys]))
    return out


def _head_lines(
    head: int, name: str, xs: Sequence[float | None], ys: Sequence[float | None], *, legend: bool, line: dict[str, Any]
) -> go.Scatter:
    """Lines of one head in the head view, grouped under the head's legend entry; hovering them shows nothing
    (the token columns carry the hover text)."""
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        name=name,
        legendgroup=f"head{head}",
        showlegend=legend,
        meta=dict(head=head),
        line=line,
        hoverinfo="skip",
    )


def head_view(
    weights: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    heads: Sequence[int] | None = None,
    title: str | None = None,
    threshold: float = 0.02,
    levels: int = 8,
    query_title: str | None = None,
    key_title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """BertViz-style view of one layer, weights (H, q, k): queries on the left, keys on the right.

    A line joins query i to key j for each head in `heads` (0-based indices; default all), with
    opacity and width growing with the weight, one colour per head. Weights under `threshold` are not
    drawn; the rest are binned into `levels` opacity steps, so each head is at most `levels` line
    traces plus one legend entry. Traces of head h carry meta={"head": h} and legendgroup "head{h}",
    so clicking "Head h+1" in the legend hides or shows all of its lines. Hovering a query token
    lists its strongest keys per drawn head. Column titles default to "query" and "key" in `lang`.
    """
    query_title = translate("query", lang) if query_title is None else query_title
    key_title = translate("key", lang) if key_title is None else key_title
    w = _check(weights, 3, query_labels, key_labels, "(heads, q, k)")
    n_heads, q, k = w.shape
    selected = list(range(n_heads)) if heads is None else [int(h) for h in heads]
    for h in selected:
        assert 0 <= h < n_heads, f"head index {h} out of range, expected 0 <= head < {n_heads}"
    assert levels >= 1, f"expected levels >= 1, got {levels}"

    fig = go.Figure()
    for h in selected:
        name = translate("Head {n}", lang, n=h + 1)
        base = color(h)
        # A full-strength legend swatch: the first drawn bucket may be faint.
        fig.add_trace(_head_lines(h, name, [None], [None], legend=True, line=dict(color=base, width=4)))
        for lv, xs, ys in _bucket_segments(w[h], threshold, levels):
            strength = lv / levels
            line = dict(color=rgba(base, 0.1 + 0.9 * strength), width=0.5 + 4.5 * strength)
            fig.add_trace(_head_lines(h, name, xs, ys, legend=False, line=line))

    ql, kl = escape_labels(query_labels), escape_labels(key_labels)
    query_hover = []
    for i in range(q):
        lines = [f"<b>{ql[i]}</b> ({query_title} {i})"]
        for h in selected:
            top = np.argsort(-w[h, i])[:3]
            strongest = ", ".join(f"{kl[j]} {w[h, i, j]:.2f}" for j in top)
            lines.append(translate("Head {n}", lang, n=h + 1) + ": " + strongest)
        query_hover.append("<br>".join(lines))
    key_hover = [f"<b>{kl[j]}</b> ({key_title} {j})" for j in range(k)]
    # The two columns of tokens: queries at x = 0 labelled on the left, keys at x = 1 labelled on the right.
    for x, tokens, side, column_title, hover in (
        (0.0, ql, "left", query_title, query_hover),
        (1.0, kl, "right", key_title, key_hover),
    ):
        fig.add_trace(
            go.Scatter(
                x=np.full(len(tokens), x),
                y=-np.arange(len(tokens)),
                mode="markers+text",
                text=tokens,
                textposition=f"middle {side}",
                marker=dict(size=8, color="rgba(128, 128, 128, 0.8)"),
                name=column_title,
                showlegend=False,
                hovertext=hover,
                hoverinfo="text",
                textfont=dict(size=TICK_SIZE),
            )
        )
    n = max(q, k)
    fig.update_xaxes(visible=False, range=[-1.1, 2.1], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-(n - 1) - 0.6, 1.0], fixedrange=True)
    fig.add_annotation(x=0, y=0.8, text=f"<b>{query_title}</b>", showarrow=False, xanchor="right")
    fig.add_annotation(x=1, y=0.8, text=f"<b>{key_title}</b>", showarrow=False, xanchor="left")
    fig.update_layout(hovermode="closest", legend=dict(title=dict(text=translate("heads", lang))))
    apply_theme(fig, title=title, height=max(400, _ROW_PX * n + 160))
    return fig
