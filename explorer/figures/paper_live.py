"""Figures for what the paper tells in words, made live: word order with and without positional encoding
(Section 3.5), and additive against dot-product attention (Section 3.2.1).

Pure functions: arrays and labels in, a plotly figure out; `lang` for titles and axis labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.attention import index_axis, pair_heatmap
from explorer.figures.theme import PALETTE, WEIGHT_COLORSCALE, apply_theme, colorbar, escape_labels, wrap_words
from explorer.i18n import translate
from explorer.text.pieces import shown_pieces

PAIR_HOVER = "%{customdata[0]} \u2192 %{customdata[1]}: %{z:.3f}<extra></extra>"


def _weights(weights: np.ndarray, rows: Sequence[str], cols: Sequence[str]) -> go.Heatmap:
    """Weights (q, k) on the figure's one [0, 1] colour axis (`_weight_axis`), cells apart by a pixel."""
    return pair_heatmap(weights, rows, cols, coloraxis="coloraxis", hovertemplate=PAIR_HOVER, xgap=1, ygap=1)


def _weight_axis(fig: go.Figure, lang: str) -> None:
    fig.update_layout(
        coloraxis=dict(colorscale=WEIGHT_COLORSCALE, cmin=0.0, cmax=1.0, colorbar=colorbar(translate("weight", lang)))
    )


def word_order_figure(
    with_pe: tuple[np.ndarray, np.ndarray],
    without_pe: tuple[np.ndarray, np.ndarray],
    original_pieces: Sequence[str],
    swapped_pieces: Sequence[str],
    *,
    layer: int,
    head: int,
    lang: str = "en",
) -> go.Figure:
    """One encoder head's attention (n, n) for the original and the swapped sentence (columns), with and
    without positional encoding (rows). Without it the swapped map is the original's, rows and columns
    permuted."""
    labels = (shown_pieces(original_pieces), shown_pieces(swapped_pieces))
    titles = [
        translate("original, with PE", lang),
        translate("swapped, with PE", lang),
        translate("original, without PE", lang),
        translate("swapped, without PE", lang),
    ]
    fig = make_subplots(rows=2, cols=2, subplot_titles=titles, horizontal_spacing=0.16, vertical_spacing=0.2)
    for row, pair in enumerate((with_pe, without_pe), start=1):
        for col, (weights, names) in enumerate(zip(pair, labels, strict=True), start=1):
            fig.add_trace(_weights(weights, names, names), row=row, col=col)
            fig.update_xaxes(tickangle=-90, row=row, col=col, **index_axis(names))
            fig.update_yaxes(row=row, col=col, **index_axis(names, reverse=True))
    _weight_axis(fig, lang)
    apply_theme(
        fig,
        title=translate("Encoder self-attention \u00b7 layer {layer}, head {head}", lang, layer=layer, head=head),
        height=720,
    )
    return fig.update_layout(margin=dict(t=90, l=70, r=20, b=60))


# Message ids: each scoring's legend entry.
SCORING_LABELS = {
    "dot": "q\u00b7k (unscaled)",
    "scaled_dot": "q\u00b7k/\u221ad_k (Eq. 1)",
    "additive": "additive: v\u1d40 tanh(W\u2081q + W\u2082k)",
}


def additive_query_figure(
    key_labels: Sequence[str], dot_weights: np.ndarray, additive_weights: np.ndarray, *, lang: str = "en"
) -> go.Figure:
    """One query's weights (k,) over its keys: scaled dot-product (the model's) beside additive (seeded)."""
    labels = escape_labels(shown_pieces(key_labels))
    fig = go.Figure()
    for weights, name, hue in (
        (dot_weights, translate("scaled dot-product (this head)", lang), PALETTE[0]),
        (additive_weights, translate("additive (seeded weights)", lang), PALETTE[2]),
    ):
        fig.add_trace(
            go.Bar(
                x=list(range(len(labels))),
                y=list(weights),
                name=name,
                marker_color=hue,
                customdata=labels,
                hovertemplate="%{customdata}: %{y:.3f}<extra></extra>",
            )
        )
    fig.update_xaxes(
        tickmode="array", tickvals=list(range(len(labels))), ticktext=labels, title_text=translate("key", lang)
    )
    fig.update_yaxes(title_text=translate("weight", lang), range=[0, 1])
    apply_theme(fig, title=translate("One query, two compatibility functions", lang), height=420)
    return fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.35, x=0), margin=dict(b=120))


def additive_saturation_figure(
    d_ks: Sequence[int],
    max_weight: Mapping[str, Sequence[float]],
    entropy: Mapping[str, Sequence[float]],
    *,
    n_keys: int,
    lang: str = "en",
) -> go.Figure:
    """Mean largest weight and mean entropy against d_k (log axis) for each scoring in SCORING_LABELS."""
    names = [translate("largest weight", lang), translate("row entropy (nats)", lang)]
    fig = make_subplots(rows=1, cols=2, subplot_titles=names, horizontal_spacing=0.14)
    hues = {"dot": PALETTE[2], "scaled_dot": PALETTE[0], "additive": PALETTE[1]}
    dashes = {"dot": "solid", "scaled_dot": "dash", "additive": "dot"}
    for col, series in enumerate((max_weight, entropy), start=1):
        for scoring, values in series.items():
            fig.add_trace(
                go.Scatter(
                    x=list(d_ks),
                    y=list(values),
                    name=translate(SCORING_LABELS[scoring], lang),
                    legendgroup=scoring,
                    showlegend=col == 1,
                    mode="lines+markers",
                    line=dict(color=hues[scoring], width=3, dash=dashes[scoring]),
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(type="log", title_text="d_k", row=1, col=col)
    title = translate("Random q, k ({n} keys): which scoring saturates as d_k grows", lang, n=n_keys)
    apply_theme(fig, title=title, height=420)
    return fig.update_layout(legend=dict(orientation="h", y=-0.3, x=0), margin=dict(t=90, b=110))


def heads_against_one_figure(
    eight: np.ndarray, one: np.ndarray, labels: tuple[Sequence[str], Sequence[str]], *, lang: str = "en"
) -> go.Figure:
    """Table 3, row (A), as attention: the one-head model's map (1, q, k) beside the many-head model's heads
    (h, q, k), with their mean; `labels` are (target tokens, source tokens), the rows and the columns (the top
    decoder layer's encoder-decoder attention, which the caption names)."""
    heads = eight.shape[0]
    per_row = 4
    grid_rows = 1 + -(-heads // per_row)
    titles = [translate("1 head", lang), translate("mean of {h} heads", lang, h=heads), "", ""]
    titles += [translate("head {head}", lang, head=h + 1) for h in range(heads)]
    rows, cols = (shown_pieces(side) for side in labels)
    fig = make_subplots(
        rows=grid_rows, cols=per_row, subplot_titles=titles, horizontal_spacing=0.05, vertical_spacing=0.12
    )
    maps = [(one[0], 1, 1), (eight.mean(axis=0), 1, 2)]
    maps += [(eight[h], 2 + h // per_row, 1 + h % per_row) for h in range(heads)]
    for weights, row, col in maps:
        fig.add_trace(_weights(weights, rows, cols), row=row, col=col)
        # The pieces are short (one symbol of the toy task): upright labels under cells this narrow.
        fig.update_xaxes(tickangle=0, showticklabels=row == grid_rows or row == 1, row=row, col=col, **index_axis(cols))
        fig.update_yaxes(showticklabels=col == 1, row=row, col=col, **index_axis(rows, reverse=True))
    for col in (3, 4):  # the first row's two free cells stay empty
        fig.update_xaxes(visible=False, row=1, col=col)
        fig.update_yaxes(visible=False, row=1, col=col)
    _weight_axis(fig, lang)
    title = wrap_words(translate("Row (A): one head against {h}", lang, h=heads))
    apply_theme(fig, title=title, height=260 * grid_rows + 80)
    return fig.update_layout(margin=dict(t=90, l=60, r=20, b=60)).update_annotations(font_size=15)
