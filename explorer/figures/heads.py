"""Figures for what heads do: importance heatmaps, pruning curves, rollout next to plain cross-attention,
and one layer's heads with the switched-off ones blanked. Pure functions: arrays and labels in, a plotly
figure out; user-visible text goes through `explorer.i18n.translate(…, lang)`. Each remembers its last
figures (explorer/figures/memo.py): a page's rerun with unchanged inputs copies them instead of building anew."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.attention import _check, index_axis, pair_heatmap, weight_axis
from explorer.figures.memo import remembered
from explorer.figures.theme import (
    DIVERGING_COLORSCALE,
    FONT_SIZE,
    WEIGHT_COLORSCALE,
    apply_theme,
    color,
    colorbar,
    text_width_px,
)
from explorer.i18n import translate
from explorer.paper import HEAD_FAMILY_TITLES


def layer_head_axes(
    fig: go.Figure, col: int, head_labels: Sequence[str], layers: int, head_word: str, layer_word: str
) -> None:
    """Panel `col` of a one-row layer × head grid: heads across (labelled `head_labels`), layers down counted from 1
    (as on every page), layer 1 at the top; the layer title on the first panel only."""
    fig.update_xaxes(
        title_text=head_word,
        tickmode="array",
        tickvals=list(range(len(head_labels))),
        ticktext=list(head_labels),
        row=1,
        col=col,
    )
    fig.update_yaxes(
        title_text=layer_word if col == 1 else None,
        tickmode="array",
        tickvals=list(range(layers)),
        ticktext=[str(layer + 1) for layer in range(layers)],
        range=[layers - 0.5, -0.5],
        row=1,
        col=col,
    )


def layer_head_trace(values: np.ndarray, *, name: str, decimals: int, hovertemplate: str, **extra: Any) -> go.Heatmap:
    """One panel of a layer x head grid: `values` (layers, columns) with its number in every cell at `decimals`,
    on the figure's shared colour axis; `extra` (meta, customdata) goes to the trace."""
    layers, columns = values.shape
    return go.Heatmap(
        z=values, x=np.arange(columns), y=np.arange(layers), coloraxis="coloraxis", name=name,
        texttemplate=f"%{{z:.{decimals}f}}", hovertemplate=hovertemplate, **extra,
    )  # fmt: skip


@remembered()
def importance_heatmaps(
    grids: Mapping[str, np.ndarray], *, value_title: str = "BLEU drop", lang: str = "en"
) -> go.Figure:
    """One layer × head heatmap per family, grids[family] (layers, heads), values written in the cells.

    Signed values (a BLEU drop can be negative: the model did better without the head) use a diverging
    scale centred on 0, shared by all panels so equal colours mean equal values.
    """
    families = list(grids)
    assert families, "no family to draw"
    values = [np.asarray(grids[f], dtype=float) for f in families]
    for f, v in zip(families, values, strict=True):
        assert v.ndim == 2, f"{f}: expected (layers, heads), got shape {v.shape}"
    bound = max(float(np.nanmax(np.abs(v))) for v in values) or 1.0
    fig = make_subplots(
        rows=1,
        cols=len(families),
        horizontal_spacing=0.08,
        subplot_titles=[translate(HEAD_FAMILY_TITLES.get(f, f), lang) for f in families],
    )
    head_word, layer_word = translate("Head", lang), translate("Layer", lang)
    for col, (family, v) in enumerate(zip(families, values, strict=True), start=1):
        layers, heads = v.shape
        # The hover names the head as links and the command line do (0-based) and as the axes do.
        named = [
            [translate("{name} (layer {layer}, head {head})", lang, name=f"{family}.{y}.{x}", layer=y + 1, head=x + 1)
             for x in range(heads)]
            for y in range(layers)
        ]  # fmt: skip
        fig.add_trace(
            layer_head_trace(
                v,
                name=family,
                decimals=1,
                meta=dict(family=family),
                customdata=named,
                hovertemplate=f"%{{customdata}}<br>{value_title}: %{{z:.2f}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        layer_head_axes(fig, col, [str(h + 1) for h in range(heads)], layers, head_word, layer_word)
    fig.update_layout(
        coloraxis=dict(colorscale=DIVERGING_COLORSCALE, cmin=-bound, cmax=bound, colorbar=colorbar(value_title))
    )
    rows = max(v.shape[0] for v in values)
    return apply_theme(
        fig,
        title=translate("{value} when one head is switched off", lang, value=value_title),
        height=max(320, 70 * rows + 200),
    )


@remembered()
def pruning_curves(
    curves: Mapping[str, Sequence[tuple[int, float]]], baseline: float, *, lang: str = "en"
) -> go.Figure:
    """BLEU against the number of heads removed, one line per family (Michel et al., 2019, Figure 3).

    curves[family] = [(removed, bleu), …] starting at (0, baseline); the full model's BLEU is a dashed line.
    """
    fig = go.Figure()
    for i, (family, points) in enumerate(curves.items()):
        removed_bleu = np.asarray(points, dtype=float).reshape(-1, 2)  # (points, 2)
        fig.add_trace(
            go.Scatter(
                x=removed_bleu[:, 0],
                y=removed_bleu[:, 1],
                mode="lines+markers",
                name=translate(HEAD_FAMILY_TITLES[family], lang),
                line=dict(color=color(i), width=3),
                hovertemplate="%{x}: BLEU %{y:.2f}<extra>" + family + "</extra>",
            )
        )
    fig.add_hline(
        y=baseline,
        line_dash="dash",
        line_color="gray",
        annotation_text=translate("all heads", lang),
        annotation_position="top right",
    )
    fig.update_xaxes(title_text=translate("heads removed (least important first)", lang), dtick=1)
    fig.update_yaxes(title_text="BLEU", rangemode="tozero")
    return apply_theme(fig, title=translate("Pruning heads one family at a time", lang), height=460)


@remembered()
def rollout_comparison(
    rollout: np.ndarray,
    plain: np.ndarray,
    output_labels: Sequence[str],
    source_labels: Sequence[str],
    *,
    lang: str = "en",
) -> go.Figure:
    """Output → source attribution through all layers (left) beside the top layer's mean cross-attention
    (right), both (tgt, src) with rows summing to one, on one colour scale."""
    left = _check(rollout, 2, output_labels, source_labels, "(tgt, src)")
    right = _check(plain, 2, output_labels, source_labels, "(tgt, src)")
    assert left.shape == right.shape, f"rollout {left.shape} and cross-attention {right.shape} differ"
    titles = [translate("Flow through all layers (rollout)", lang), translate("Top layer, mean of heads", lang)]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06, subplot_titles=titles)
    for col, (w, name) in enumerate(zip((left, right), ("rollout", "last layer"), strict=True), start=1):
        fig.add_trace(
            pair_heatmap(
                w,
                output_labels,
                source_labels,
                coloraxis="coloraxis",
                name=name,
                hovertemplate="%{customdata[0]} → %{customdata[1]}: %{z:.3f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text=translate("source", lang), **index_axis(source_labels), row=1, col=col)
    fig.update_yaxes(title_text=translate("output", lang), **index_axis(output_labels, reverse=True), row=1, col=1)
    fig.update_layout(coloraxis=weight_axis(translate("share", lang)))
    return apply_theme(fig, height=max(380, 34 * left.shape[0] + 200))


@remembered()
def layer_heads(
    weights: np.ndarray,
    off: Sequence[bool],
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    title: str | None = None,
    lang: str = "en",
    height: int | None = None,
    width: int = 600,
) -> go.Figure:
    """One layer's heads side by side, weights (heads, q, k); a switched-off head is drawn empty, titled "off".

    The weights of an ablated head are still computed (only its output is removed), so they are hidden
    rather than shown: they no longer reach the translation. Drawn `height` px tall (default: 30 px a query
    row) and at least `width` px wide, every n-th token is named where naming them all would stack the labels
    (a model with heads off can repeat a piece to the length limit), and panels too narrow for "Head 1 · off"
    are titled "1 · off" (the figure's title says they are heads).
    """
    w = _check(weights, 3, query_labels, key_labels, "(heads, q, k)")
    heads, q, k = w.shape
    assert len(off) == heads, f"expected {heads} on/off flags, got {len(off)}"
    off_word = translate("off", lang)
    named = [translate("Head {n}", lang, n=h + 1) for h in range(heads)]  # 1-based, as on every page
    titles = [f"{named[h]} · {off_word}" if off[h] else named[h] for h in range(heads)]
    panel_px = (width - _SIDES_PX) / heads
    if max(text_width_px(title, FONT_SIZE) for title in titles) > panel_px:  # "Head 1 · offHead 2" ran together
        titles = [f"{h + 1} · {off_word}" if off[h] else str(h + 1) for h in range(heads)]
    fig = make_subplots(
        rows=1,
        cols=heads,
        shared_yaxes=True,
        horizontal_spacing=min(0.03, 0.3 / max(heads - 1, 1)),
        subplot_titles=titles,
    )
    for h in range(heads):
        z = np.full((q, k), np.nan) if off[h] else w[h]
        fig.add_trace(
            pair_heatmap(
                z,
                query_labels,
                key_labels,
                coloraxis="coloraxis",
                name=titles[h],
                meta=dict(head=h, off=bool(off[h])),
                hovertemplate="%{customdata[0]} → %{customdata[1]}: %{z:.3f}<extra></extra>",
            ),
            row=1,
            col=h + 1,
        )
    height = max(360, 30 * q + 220) if height is None else height
    for h in range(heads):
        fig.update_xaxes(**thinned_axis(key_labels, panel_px), row=1, col=h + 1)
    fig.update_yaxes(**thinned_axis(query_labels, height - _ABOVE_BELOW_PX, reverse=True), row=1, col=1)
    fig.update_layout(coloraxis=weight_axis(translate("weight", lang)))
    return apply_theme(fig, title=title, height=height)


_SIDES_PX = 220  # the theme's side margins, the query labels and the colour bar
_ABOVE_BELOW_PX = 220  # the title, the panels' titles and the key labels
TICK_PX = 22  # the least px between two named ticks: a tick label's line with some air


def thinned_axis(labels: Sequence[str], span_px: float, *, reverse: bool = False) -> dict[str, object]:
    """`index_axis` over `labels` on an axis `span_px` long, naming every n-th position (n the least that leaves
    `TICK_PX` between names) so that long outputs keep readable axes."""
    axis = index_axis(labels, reverse=reverse)
    every = max(1, int(np.ceil(len(labels) * TICK_PX / max(span_px, 1.0))))
    if every > 1:
        axis["tickvals"] = axis["tickvals"][::every]
        axis["ticktext"] = axis["ticktext"][::every]
    return axis


REPLAY_GAP = 0.22  # between the heatmap and the loss curve (the loss axis's numbers and title), share of width
REPLAY_BAR_X = 1.02  # the heatmap's colour bar right of both plots: between them it hit the loss axis at 1024 px


@remembered()
def replay_frame(
    weights: np.ndarray,
    output_labels: Sequence[str],
    source_labels: Sequence[str],
    loss_steps: Sequence[int],
    losses: Sequence[float],
    step: int,
    *,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """One head's cross-attention at one training step (left), weights (output, source), beside the training
    loss curve with that step marked (right)."""
    w = _check(weights, 2, output_labels, source_labels, "(output, source)")
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.55, 0.45],
        horizontal_spacing=REPLAY_GAP,
        subplot_titles=[translate("Cross-attention at step {step}", lang, step=step), translate("Training loss", lang)],
    )
    fig.add_trace(
        pair_heatmap(
            w,
            output_labels,
            source_labels,
            coloraxis="coloraxis",
            name="attention",
            meta=dict(step=int(step)),
            hovertemplate="%{customdata[0]} → %{customdata[1]}: %{z:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.update_xaxes(title_text=translate("source", lang), **index_axis(source_labels), row=1, col=1)
    fig.update_yaxes(title_text=translate("output", lang), **index_axis(output_labels, reverse=True), row=1, col=1)
    if len(loss_steps):
        fig.add_trace(
            go.Scatter(
                x=list(loss_steps),
                y=list(losses),
                mode="lines",
                name=translate("loss", lang),
                line=dict(color=color(0), width=2),
                showlegend=False,
            ),
            row=1,
            col=2,
        )
    fig.add_vline(x=step, line_dash="dash", line_color=color(1), row=1, col=2)
    fig.update_xaxes(title_text=translate("step", lang), row=1, col=2)
    fig.update_yaxes(title_text=translate("loss", lang), row=1, col=2)
    fig.update_layout(
        coloraxis=dict(
            colorscale=WEIGHT_COLORSCALE,
            cmin=0.0,
            cmax=1.0,
            colorbar=colorbar(translate("weight", lang), x=REPLAY_BAR_X, xanchor="left"),
        )
    )
    return apply_theme(fig, title=title, height=max(400, 32 * w.shape[0] + 220))
