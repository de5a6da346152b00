"""The tour's figures for the feed-forward network and embeddings (stop 4) and positional encoding (stop 5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explorer.figures.theme import DIVERGING_COLORSCALE, WEIGHT_COLORSCALE, colorbar, escape_labels
from explorer.figures.tour_attention import compact
from explorer.i18n import translate
from explorer.text.pieces import shown_pieces


def _labels(pieces: Sequence[str]) -> list[str]:
    return escape_labels(shown_pieces(pieces))


def _token_heatmap(z: np.ndarray, labels: Sequence[str], y_title: str, **trace: Any) -> go.Figure:
    """z (tokens, columns) as a heatmap with one row a token, the first at the top; `trace` goes to `go.Heatmap`."""
    rows = list(range(len(labels)))
    fig = go.Figure(go.Heatmap(z=z, y=rows, **trace))
    fig.update_yaxes(tickmode="array", tickvals=rows, ticktext=labels, autorange="reversed", title_text=y_title)
    return fig


# The feed-forward activations by the names the tour shows (explorer.config.ACTIVATIONS).
ACTIVATION_NAMES = {"relu": "ReLU", "swish": "swish", "gelu": "GELU"}


def ffn_figure(
    hidden: np.ndarray,
    tokens: Sequence[str],
    *,
    layer: int,
    units: int = 96,
    show_zero_share: bool = True,
    activation: str = "relu",
    lang: str = "en",
) -> go.Figure:
    """hidden (n, d_ff) = activation(x W1 + b1): the first `units` inner units of each token.

    The paper's ReLU (Eq. 2) gives no negative value, so zeros are dark on a one-sided scale; swish and GELU
    squeeze negative pre-activations to small negative values, drawn on a scale centred on zero. The title gives the
    share of values at or below zero (ReLU's exact zeros) only with `show_zero_share` (the tour asks for it before
    it tells)."""
    h = np.asarray(hidden, dtype=float)
    shown = h[:, :units]
    labels = _labels(tokens)
    relu = activation == "relu"
    scale: dict[str, Any] = (
        dict(colorscale=WEIGHT_COLORSCALE, zmin=0) if relu else dict(colorscale=DIVERGING_COLORSCALE, zmid=0)
    )
    fig = _token_heatmap(
        shown,
        labels,
        translate("token", lang),
        colorbar=colorbar(translate("activation", lang)),
        hovertemplate=translate("unit", lang) + " %{x}: %{z:.3f}<extra></extra>",
        **scale,
    )
    fig.update_xaxes(
        title_text=translate("inner unit (first {units} of d_ff = {d_ff})", lang, units=shown.shape[1], d_ff=h.shape[1])
    )
    return compact(fig, _ffn_title(h, layer, show_zero_share, activation, lang), 420)


def _ffn_title(h: np.ndarray, layer: int, show_share: bool, activation: str, lang: str) -> str:
    if activation == "relu":
        zero = f"{100 * float((h == 0).mean()):.0f}"
        if show_share:
            return translate(
                "max(0, xW\u2081 + b\u2081), encoder layer {layer}: {zero}% zeros", lang, layer=layer, zero=zero
            )
        return translate("max(0, xW\u2081 + b\u2081), encoder layer {layer}", lang, layer=layer)
    function = ACTIVATION_NAMES[activation]
    if show_share:
        return translate(
            "{function}(xW\u2081 + b\u2081), encoder layer {layer}: {share}% at or below zero",
            lang,
            function=function,
            layer=layer,
            share=f"{100 * float((h <= 0).mean()):.0f}",
        )
    return translate("{function}(xW\u2081 + b\u2081), encoder layer {layer}", lang, function=function, layer=layer)


def norms_figure(
    tokens: Sequence[str],
    embedding: np.ndarray,
    scaled: np.ndarray,
    positional: np.ndarray,
    *,
    d_model: int,
    lang: str = "en",
) -> go.Figure:
    """Per token: ‖E[token]‖, ‖E[token]·√d_model‖ and ‖PE(pos)‖, the two things the model adds together."""
    labels = _labels(tokens)
    fig = go.Figure(
        [
            go.Bar(x=labels, y=embedding, name="\u2016E[token]\u2016"),
            go.Bar(x=labels, y=scaled, name=f"\u2016E[token]\u00b7\u221a{d_model}\u2016"),
            go.Bar(x=labels, y=positional, name="\u2016PE(pos)\u2016"),
        ]
    )
    fig.update_yaxes(title_text=translate("vector length", lang))
    compact(fig, translate("Vector lengths per token", lang), 400)
    return fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.25, yanchor="top", x=0))


def positional_figure(table: np.ndarray, tokens: Sequence[str], *, lang: str = "en") -> go.Figure:
    """table (n, d_model): the positional vector added to each token of this sentence, dimension by dimension."""
    t = np.asarray(table, dtype=float)
    # Sines first, then cosines: each half is a smooth sweep from fast to slow wavelengths, where the
    # interleaved order of the table would draw stripes.
    t = np.concatenate([t[:, 0::2], t[:, 1::2]], axis=1)
    labels = [f"{i}: {w}" for i, w in enumerate(_labels(tokens))]
    hover = "pos %{y}, " + translate("dimension", lang) + " %{x}: %{z:.3f}<extra></extra>"
    fig = _token_heatmap(
        t,
        labels,
        translate("position: token", lang),
        colorscale=DIVERGING_COLORSCALE,
        zmin=-1,
        zmax=1,
        colorbar=colorbar("PE"),
        hovertemplate=hover,
    )
    fig.update_xaxes(title_text=translate("sin dimensions 2i, then cos dimensions 2i+1", lang))
    return compact(fig, translate("PE(pos) of this sentence, d_model = {d}", lang, d=t.shape[1]), 420)
