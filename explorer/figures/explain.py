"""Figures of the "Is attention explanation?" page (explorer/explain/): attribution beside attention, the rank
agreement per layer and head, the heads a minimal pair changes most, and a head's alignment links over a
reference alignment. Pure builders: arrays and labels in,
a plotly figure out; text in `lang`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.attention import attention_heatmap, index_axis
from explorer.figures.heads import layer_head_axes, layer_head_trace
from explorer.figures.theme import DIVERGING_COLORSCALE, apply_theme, color, colorbar, escape_labels, legend_below
from explorer.i18n import translate

_BAR_ROW_PX = 32


def shares(values: np.ndarray) -> np.ndarray:
    """|v| / Σ|v|: a row of attributions or attention as shares of its total magnitude (zeros stay zeros)."""
    v = np.abs(np.asarray(values, dtype=np.float64))
    total = v.sum()
    return v / total if total > 0 else v


def attribution_bars(
    source_labels: Sequence[str], series: Mapping[str, np.ndarray], *, title: str, lang: str = "en"
) -> go.Figure:
    """Grouped bars over the source pieces, one group per piece, one bar per series (name -> (src,) values,
    names already in `lang`), each drawn as its share of the total magnitude so attribution and attention share
    one axis. One bar trace per series, in order, named as given."""
    assert series, "nothing to draw"
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        v = np.asarray(values, dtype=np.float64)
        assert v.shape == (len(source_labels),), f"{name}: expected {len(source_labels)} values, got {v.shape}"
        fig.add_trace(
            go.Bar(
                x=np.arange(len(source_labels)),
                y=shares(v),
                name=name,
                marker_color=color(i),
                customdata=escape_labels(source_labels),
                hovertemplate=f"{escape_labels([name])[0]}<br>%{{customdata}}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text=translate("source (key)", lang), **index_axis(source_labels))
    fig.update_yaxes(title_text=translate("share of the total", lang), rangemode="tozero")
    return legend_below(apply_theme(fig, title=title, height=420))


def layer_head_heatmaps(
    grids: Mapping[str, np.ndarray],
    *,
    title: str,
    value_name: str,
    value_range: tuple[float, float],
    colorscale: str = DIVERGING_COLORSCALE,
    lang: str = "en",
) -> go.Figure:
    """One layer × head heatmap per panel (name in `lang` -> (layers, heads + 1), the last column the layer's
    mean over heads), on one colour scale over `value_range`, values written in the cells; `value_name` ("ρ",
    "AER") names the values in the hover and on the colour bar."""
    names = list(grids)
    assert names, "no panel to draw"
    fig = make_subplots(rows=1, cols=len(names), horizontal_spacing=0.08, subplot_titles=escape_labels(names))
    head_word, layer_word, mean_word = translate("Head", lang), translate("Layer", lang), translate("mean", lang)
    for col, name in enumerate(names, start=1):
        values = np.asarray(grids[name], dtype=np.float64)
        assert values.ndim == 2 and values.shape[1] >= 2, f"{name}: expected (layers, heads + 1), got {values.shape}"
        layers, columns = values.shape
        fig.add_trace(
            layer_head_trace(
                values,
                name=name,
                decimals=2,
                hovertemplate=f"{layer_word} %{{y}} · {head_word} %{{x}}: {value_name} = %{{z:.2f}}<extra></extra>",
            ),  # fmt: skip
            row=1,
            col=col,
        )
        head_labels = [str(h + 1) for h in range(columns - 1)] + [mean_word]
        layer_head_axes(fig, col, head_labels, layers, head_word, layer_word)
    low, high = value_range
    fig.update_layout(coloraxis=dict(colorscale=colorscale, cmin=low, cmax=high, colorbar=colorbar(value_name)))
    rows = max(np.asarray(g).shape[0] for g in grids.values())
    return apply_theme(fig, title=title, height=max(320, 70 * rows + 200))


def head_change_bars(labels: Sequence[str], distances: Sequence[float], *, title: str, lang: str = "en") -> go.Figure:
    """Horizontal bars of the heads a minimal pair changes most, the largest on top: labels ("Cross · layer 2 ·
    head 1", in `lang`) and distances in [0, 1] in the same order, largest first."""
    d = np.asarray(distances, dtype=np.float64)
    assert len(labels) == len(d), f"{len(labels)} labels for {len(d)} distances"
    fig = go.Figure(
        go.Bar(
            x=d,
            y=np.arange(len(d)),
            orientation="h",
            marker_color=color(0),
            customdata=escape_labels(labels),
            hovertemplate="%{customdata}: %{x:.3f}<extra></extra>",
        )
    )
    fig.update_yaxes(**index_axis(labels, reverse=True))
    fig.update_xaxes(title_text=translate("change in attention (total variation)", lang), range=[0, 1])
    return apply_theme(fig, title=title, height=max(300, _BAR_ROW_PX * len(d) + 160))


def alignment_overlay(
    weights: np.ndarray,
    source_words: Sequence[str],
    target_words: Sequence[str],
    reference: tuple[Iterable[tuple[int, int]], Iterable[tuple[int, int]]],
    links: Iterable[tuple[int, int]],
    *,
    title: str,
    lang: str = "en",
) -> go.Figure:
    """One head's word-level cross-attention, weights (target words + 1, source words) with the `</s>` row last,
    under the reference alignment (sure, possible) drawn as open squares (sure) and open circles (possible only),
    and the head's argmax links as crosses; a link (i, j) joins source word i and target word j (0-based). Traces:
    the heatmap, then the sure, possible and head markers, in that order (a group with no link is still there)."""
    rows = [*target_words, "</s>"]
    fig = attention_heatmap(weights, rows, source_words, title=title, x_title=translate("source (key)", lang),
                            y_title=translate("target (query)", lang), lang=lang)  # fmt: skip
    sure, possible = set(reference[0]), set(reference[1])
    groups = (
        (translate("reference, sure", lang), sorted(sure), dict(symbol="square-open", size=22, line=dict(width=3))),
        (translate("reference, possible", lang), sorted(possible - sure), dict(symbol="circle-open", size=18)),
        (translate("this head's strongest word", lang), sorted(links), dict(symbol="x-thin-open", size=16)),
    )
    for i, (name, group, marker) in enumerate(groups):
        fig.add_trace(
            go.Scatter(
                x=[s for s, _ in group],
                y=[t for _, t in group],
                mode="markers",
                name=name,
                marker=dict(color=color(i + 1), **{"line": dict(width=2), **marker}),
                hovertemplate=f"{escape_labels([name])[0]}<extra></extra>",
            )
        )
    return legend_below(fig)
