"""The tour's attention figures: one head with and without ÷√d_k (stop 2), the three uses of attention side
by side with the causal mask drawn (stop 3), and one layer under an encoder and a causal mask (stop 10).

Pure functions: arrays and token labels in, a plotly figure out; `lang` for titles and axis labels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.theme import PALETTE, WEIGHT_COLORSCALE, apply_theme, colorbar, escape_labels
from explorer.i18n import translate
from explorer.text.pieces import shown_pieces

MASKED_GREY = "rgba(150, 150, 150, 0.75)"


def _labels(pieces: Sequence[str]) -> list[str]:
    return escape_labels(shown_pieces(pieces))


def _heatmap(
    weights: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    show_scale: bool,
    zmax: float = 1.0,
    lang: str = "en",
) -> go.Heatmap:
    return go.Heatmap(
        z=weights,
        x=list(range(len(cols))),
        y=list(range(len(rows))),
        zmin=0.0,
        zmax=zmax,
        colorscale=WEIGHT_COLORSCALE,
        showscale=show_scale,
        colorbar=colorbar(translate("weight", lang)),
        customdata=np.array([[f"{r} \u2192 {c}" for c in cols] for r in rows]),
        hovertemplate="%{customdata}: %{z:.3f}<extra></extra>",
        xgap=1,
        ygap=1,
    )


def _mask_overlay(allowed: np.ndarray) -> go.Heatmap:
    """Grey cells where the mask forbids attention (the weight there is exactly 0)."""
    z = np.where(allowed, np.nan, 1.0)
    return go.Heatmap(
        z=z,
        x=list(range(z.shape[1])),
        y=list(range(z.shape[0])),
        zmin=0,
        zmax=1,
        colorscale=[[0, MASKED_GREY], [1, MASKED_GREY]],
        showscale=False,
        hoverinfo="skip",
        xgap=1,
        ygap=1,
    )


def _token_axes(
    fig: go.Figure, rows: Sequence[str], cols: Sequence[str], row: int, col: int, *, show_rows: bool = True
) -> None:
    fig.update_xaxes(
        tickmode="array", tickvals=list(range(len(cols))), ticktext=list(cols), tickangle=-90, row=row, col=col
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(len(rows))),
        ticktext=list(rows),
        showticklabels=show_rows,
        autorange="reversed",
        row=row,
        col=col,
    )


def compact(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    """The lecture theme with a title sized for the tour's half-width column (long titles would be cut)."""
    apply_theme(fig, title=title, height=height)
    return fig.update_layout(
        title=dict(font=dict(size=18), x=0, xanchor="left"), margin=dict(t=70 if title else 30, l=60, r=20, b=60)
    )


def scaling_heatmap(
    weights: np.ndarray, tokens: Sequence[str], *, scaled: bool, layer: int, head: int, d_k: int, lang: str = "en"
) -> go.Figure:
    """weights (n, n): softmax(QKᵀ/√d_k) when `scaled`, softmax(QKᵀ) otherwise; row entropy and peak in the title."""
    w = np.asarray(weights, dtype=float)
    labels = _labels(tokens)
    entropy = float((-(w * np.log(np.clip(w, 1e-300, None))).sum(-1)).mean())
    fig = go.Figure(_heatmap(w, labels, labels, show_scale=True, lang=lang))
    fig.update_xaxes(
        title_text=translate("key", lang),
        tickmode="array",
        tickvals=list(range(len(labels))),
        ticktext=labels,
        tickangle=-45,
    )
    fig.update_yaxes(
        title_text=translate("query", lang),
        tickmode="array",
        tickvals=list(range(len(labels))),
        ticktext=labels,
        autorange="reversed",
    )
    formula = "softmax(QK\u1d40/\u221ad_k)" if scaled else "softmax(QK\u1d40)"
    title = translate("{formula} \u00b7 layer {layer}, head {head}", lang, formula=formula, layer=layer, head=head)
    subtitle = translate(
        "row entropy {entropy} nats \u00b7 largest weight {peak} (means)",
        lang,
        entropy=f"{entropy:.2f}",
        peak=f"{w.max(-1).mean():.2f}",
    )
    compact(fig, f"{title}<br><sup>{subtitle}</sup>", 440)
    return fig.update_layout(margin=dict(t=80))


def saturation_figure(
    d_ks: Sequence[int],
    max_unscaled: Sequence[float],
    max_scaled: Sequence[float],
    entropy_unscaled: Sequence[float],
    entropy_scaled: Sequence[float],
    *,
    model_d_k: int,
    lang: str = "en",
) -> go.Figure:
    """Largest weight and row entropy against d_k for random unit-variance q, k, with and without ÷√d_k."""
    names = [translate("largest weight", lang), translate("row entropy (nats)", lang)]
    fig = make_subplots(rows=1, cols=2, subplot_titles=names, horizontal_spacing=0.14)
    series = ((max_unscaled, max_scaled), (entropy_unscaled, entropy_scaled))
    for col, (unscaled, scaled) in enumerate(series, start=1):
        for values, name, hue, dash in (
            (unscaled, translate("without \u00f7\u221ad_k", lang), PALETTE[2], "solid"),
            (scaled, translate("with \u00f7\u221ad_k (Eq. 1)", lang), PALETTE[0], "dash"),
        ):
            fig.add_trace(
                go.Scatter(
                    x=list(d_ks),
                    y=list(values),
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    mode="lines+markers",
                    line=dict(color=hue, width=3, dash=dash),
                ),
                row=1,
                col=col,
            )
        fig.add_shape(
            type="line",
            x0=model_d_k,
            x1=model_d_k,
            y0=0,
            y1=1,
            xref=f"x{'' if col == 1 else col}",
            yref=f"y{'' if col == 1 else col} domain",
            line=dict(color="gray", dash="dot"),
        )
        fig.update_xaxes(type="log", title_text="d_k", row=1, col=col)
    compact(fig, translate("Random q, k: saturation as d_k grows", lang), 400)
    return fig.update_layout(legend=dict(orientation="h", y=-0.3, x=0), margin=dict(t=90))


def heads_figure(
    weights: np.ndarray, rows: Sequence[str], cols: Sequence[str], *, masked: bool, title: str, lang: str = "en"
) -> go.Figure:
    """Every head of one attention module, two per row: weights (heads, q, k). With `masked`, the cells the
    causal mask hides (key after query) are drawn in grey (Section 3.2.3)."""
    heads = weights.shape[0]
    per_row = min(2, heads)
    grid_rows = -(-heads // per_row)
    r, c = _labels(rows), _labels(cols)
    fig = make_subplots(
        rows=grid_rows,
        cols=per_row,
        horizontal_spacing=0.04,
        vertical_spacing=0.16 / grid_rows,
        subplot_titles=[translate("head {head}", lang, head=h + 1) for h in range(heads)],
    )
    for h in range(heads):
        row, col = h // per_row + 1, h % per_row + 1
        fig.add_trace(_heatmap(weights[h], r, c, show_scale=h == 0, lang=lang), row=row, col=col)
        if masked:
            fig.add_trace(_mask_overlay(np.tril(np.ones_like(weights[h], dtype=bool))), row=row, col=col)
        _token_axes(fig, r, c, row, col, show_rows=col == 1)
        fig.update_xaxes(showticklabels=row == grid_rows, row=row, col=col)
    fig.update_xaxes(tickfont=dict(size=14))
    fig.update_yaxes(tickfont=dict(size=14))
    compact(fig, title, min(460, 120 + 170 * grid_rows))
    return fig.update_annotations(font_size=15)


def mask_figure(
    bidirectional: np.ndarray, causal: np.ndarray, tokens: Sequence[str], *, layer: int, head: int, lang: str = "en"
) -> go.Figure:
    """One head of an encoder layer under both masks: (n, n) each; the causal mask's hidden half in grey."""
    labels = _labels(tokens)
    titles = [translate("Encoder mask", lang), translate("Causal mask", lang)]
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, horizontal_spacing=0.06)
    fig.add_trace(_heatmap(bidirectional, labels, labels, show_scale=True, lang=lang), row=1, col=1)
    fig.add_trace(_heatmap(causal, labels, labels, show_scale=False, lang=lang), row=1, col=2)
    fig.add_trace(_mask_overlay(np.tril(np.ones_like(causal, dtype=bool))), row=1, col=2)
    for col in (1, 2):
        _token_axes(fig, labels, labels, 1, col, show_rows=col == 1)
    fig.update_xaxes(title_text=translate("key", lang))
    fig.update_yaxes(title_text=translate("query", lang), row=1, col=1)
    compact(fig, translate("Encoder layer {layer}, head {head}", lang, layer=layer, head=head), 440)
    return fig.update_annotations(font_size=15)
