"""Positional-encoding figures (Section 3.5): the encoding itself, its waves, and what it makes similar.

PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)), so dimension
pair i is a wave of wavelength 2*pi*10000^(2i/d_model): from 2*pi up to 10000*2*pi. The paper chose it
because PE(pos+k) is a linear function of PE(pos); the similarity figures show the consequence, that
the similarity of two positions depends (almost) only on their offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.memo import remembered
from explorer.figures.theme import (
    DIVERGING_COLORSCALE,
    WEIGHT_COLORSCALE,
    apply_theme,
    color,
    colorbar,
    escape_labels,
    rgba,
)
from explorer.i18n import translate
from explorer.text.pieces import shown_pieces


def _matrix(a: np.ndarray, name: str, shape_doc: str) -> np.ndarray:
    m = np.asarray(a)
    assert m.ndim == 2, f"expected {name} {shape_doc}, got shape {m.shape}"
    return m


def sinusoid_wavelength(dim: int, d_model: int) -> float:
    """Wavelength in positions of PE dimension `dim`: 2*pi*10000^(2i/d_model) with i = dim // 2."""
    return 2 * np.pi * 10000.0 ** (2 * (dim // 2) / d_model)


def _metric_name(metric: str, lang: str) -> str:
    """'cosine' / 'dot' (explorer.analysis.positional.METRICS) as a word in `lang`."""
    names = {"cosine": translate("cosine", lang), "dot": translate("dot product", lang)}
    return names.get(metric, metric)


def _format_wavelength(value: float) -> str:
    return f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def _pe_heatmap_trace(pe: np.ndarray, lang: str, coloraxis: str | None = None, **style: Any) -> go.Heatmap:
    n, d = pe.shape
    return go.Heatmap(
        z=pe,
        x=np.arange(d),
        y=np.arange(n),
        hovertemplate=translate("position", lang) + " %{y}, " + translate("dimension", lang) + " %{x}: "
        "%{z:.3f}<extra></extra>",
        coloraxis=coloraxis,
        **style,
    )


@remembered()
def pe_heatmap(pe: np.ndarray, *, title: str | None = None, lang: str = "en") -> go.Figure:
    """The encoding matrix pe (n, d): position on y (0 at the top), dimension on x, colours fixed to [-1, 1]."""
    pe = _matrix(pe, "pe", "(positions, d_model)")
    fig = go.Figure(
        _pe_heatmap_trace(
            pe,
            lang,
            colorscale=DIVERGING_COLORSCALE,
            zmin=-1.0,
            zmax=1.0,
            colorbar=colorbar(translate("value", lang)),
        )
    )
    fig.update_xaxes(title_text=translate("embedding dimension", lang), showgrid=False, zeroline=False)
    fig.update_yaxes(
        title_text=translate("position (from 0)", lang), autorange="reversed", showgrid=False, zeroline=False
    )
    return apply_theme(fig, title=title, height=520)


@remembered()
def pe_curves(
    pe: np.ndarray, dims: Sequence[int], *, title: str | None = None, sinusoidal: bool = True, lang: str = "en"
) -> go.Figure:
    """One line per chosen dimension of pe (n, d) against position.

    With sinusoidal=True (the paper's encoding) each legend entry names the wave:
    "dim 4 (sin, λ=…)" with λ = 2π·10000^(2i/d) in positions; for learned embeddings only "dim 4".
    """
    pe = _matrix(pe, "pe", "(positions, d_model)")
    n, d = pe.shape
    positions = np.arange(n)
    fig = go.Figure()
    for idx, dim in enumerate(dims):
        assert 0 <= dim < d, f"dimension {dim} out of range, expected 0 <= dim < {d}"
        if sinusoidal:
            wave = "sin" if dim % 2 == 0 else "cos"
            name = (
                translate("dim {dim}", lang, dim=dim)
                + f" ({wave}, \u03bb={_format_wavelength(sinusoid_wavelength(dim, d))})"
            )
        else:
            name = translate("dim {dim}", lang, dim=dim)
        fig.add_trace(
            go.Scatter(
                x=positions,
                y=pe[:, dim],
                mode="lines",
                name=name,
                line=dict(color=color(idx), width=3),
                hovertemplate=translate("dim {dim}", lang, dim=dim)
                + "<br>"
                + translate("position", lang)
                + " %{x}: %{y:.3f}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text=translate("position (from 0)", lang))
    fig.update_yaxes(title_text=translate("encoding value", lang))
    return apply_theme(fig, title=title, height=480)


@remembered()
def similarity_heatmap(
    sim: np.ndarray, *, metric: str = "cosine", title: str | None = None, lang: str = "en"
) -> go.Figure:
    """Similarity of every pair of positions, sim (n, n); cosine is shown on a fixed [-1, 1] scale."""
    sim = _matrix(sim, "sim", "(positions, positions)")
    assert sim.shape[0] == sim.shape[1], f"expected a square similarity matrix, got shape {sim.shape}"
    n = sim.shape[0]
    if metric == "cosine":
        scale = dict(colorscale=DIVERGING_COLORSCALE, zmin=-1.0, zmax=1.0)
    else:
        scale = dict(colorscale=WEIGHT_COLORSCALE)
    name, position = _metric_name(metric, lang), translate("position", lang)
    fig = go.Figure(
        go.Heatmap(
            z=sim,
            x=np.arange(n),
            y=np.arange(n),
            hovertemplate=f"{position} %{{y}}, %{{x}}: {name} %{{z:.3f}}<extra></extra>",
            colorbar=colorbar(name),
            **scale,
        )
    )
    axis_title = translate("position (from 0)", lang)
    fig.update_xaxes(title_text=axis_title, showgrid=False, zeroline=False, constrain="domain")
    fig.update_yaxes(
        title_text=axis_title, autorange="reversed", showgrid=False, zeroline=False, scaleanchor="x", constrain="domain"
    )
    return apply_theme(fig, title=title, height=560)


@remembered()
def similarity_by_offset(
    sim: np.ndarray, *, metric: str = "cosine", title: str | None = None, lang: str = "en"
) -> go.Figure:
    """Mean similarity of positions p and p+k against the offset k, with the min..max band over p.

    A thin band means the similarity depends only on the offset, not on where the pair sits.
    Trace 0 and 1 are the band's lower and upper edges, trace 2 the mean (x = offsets 0..n-1).
    """
    sim = _matrix(sim, "sim", "(positions, positions)")
    assert sim.shape[0] == sim.shape[1], f"expected a square similarity matrix, got shape {sim.shape}"
    n = sim.shape[0]
    offsets = np.arange(n)
    diagonals = [np.diagonal(sim, offset=k) for k in offsets]
    mean = np.array([d.mean() for d in diagonals])
    low = np.array([d.min() for d in diagonals])
    high = np.array([d.max() for d in diagonals])
    band = rgba(color(0), 0.25)
    name, offset = _metric_name(metric, lang), translate("offset", lang)
    mean_name = translate("mean {metric}", lang, metric=name)
    fig = go.Figure(
        [
            go.Scatter(
                x=offsets,
                y=low,
                mode="lines",
                line=dict(width=0, color=band),
                name=translate("min over p", lang),
                showlegend=False,
                hovertemplate=f"{offset} %{{x}}: min %{{y:.3f}}<extra></extra>",
            ),
            go.Scatter(
                x=offsets,
                y=high,
                mode="lines",
                line=dict(width=0, color=band),
                fill="tonexty",
                fillcolor=band,
                name=translate("min..max over positions p", lang),
                hovertemplate=f"{offset} %{{x}}: max %{{y:.3f}}<extra></extra>",
            ),
            go.Scatter(
                x=offsets,
                y=mean,
                mode="lines+markers",
                line=dict(color=color(0), width=3),
                marker=dict(size=6),
                name=mean_name,
                hovertemplate=f"{offset} %{{x}}: {mean_name} %{{y:.3f}}<extra></extra>",
            ),
        ]
    )
    fig.update_xaxes(title_text=translate("offset k (positions p and p + k)", lang))
    fig.update_yaxes(title_text=translate("{metric} similarity", lang, metric=name))
    return apply_theme(fig, title=title, height=460)


@remembered()
def embedding_norms_figure(
    token_norms: Sequence[float] | np.ndarray,  # (n,)
    pe_norms: Sequence[float] | np.ndarray,  # (n,)
    sum_norms: Sequence[float] | np.ndarray,  # (n,)
    labels: Sequence[str],
    *,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Per-token bars of ‖E·√d_model‖ (Section 3.4 scales embeddings by √d_model), ‖PE‖ and ‖sum‖.

    Shows whether the position signal is drowned by, or drowns, the token signal. The x axis is
    indexed by position, so repeated tokens keep their own bars; `labels` are the tokenizer's pieces, shown
    without the word-start marker (explorer/text/pieces.py).
    """
    series = [np.asarray(token_norms), np.asarray(pe_norms), np.asarray(sum_norms)]
    n = len(labels)
    for s in series:
        assert s.shape == (n,), f"expected {n} norms (one per label), got shape {s.shape}"
    names = [
        "\u2016E\u00b7\u221ad_model\u2016 " + translate("(token)", lang),
        "\u2016PE\u2016 " + translate("(position)", lang),
        "\u2016E\u00b7\u221ad_model + PE\u2016 " + translate("(sum)", lang),
    ]
    positions = np.arange(n)
    text = escape_labels(shown_pieces(labels))
    fig = go.Figure(
        [
            go.Bar(
                x=positions,
                y=s,
                name=name,
                marker_color=color(i),
                customdata=text,
                hovertemplate="%{customdata} (" + translate("position", lang) + f" %{{x}})<br>{name}: "
                "%{y:.2f}<extra></extra>",
            )
            for i, (s, name) in enumerate(zip(series, names, strict=False))
        ]
    )
    fig.update_xaxes(title_text=translate("token", lang), tickmode="array", tickvals=list(positions), ticktext=text)
    fig.update_yaxes(title_text=translate("L2 norm", lang))
    fig.update_layout(barmode="group")
    return apply_theme(fig, title=title, height=460)


@remembered()
def pe_side_by_side(
    sinusoidal: np.ndarray, learned: np.ndarray, *, title: str | None = None, lang: str = "en"
) -> go.Figure:
    """Sinusoidal (left, fixed [-1, 1]) and learned (right, symmetric around 0) encodings, each (n, d).

    Section 3.5 / Table 3 row (E): both variants give nearly identical results. Each panel has its own
    colour axis because learned embeddings are not bounded by 1.
    """
    sin = _matrix(sinusoidal, "sinusoidal", "(positions, d_model)")
    lrn = _matrix(learned, "learned", "(positions, d_model)")
    bound = float(np.abs(lrn).max()) or 1.0
    # Shared y (positions): the right panel needs no tick labels, leaving room for the left colour bar.
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.16,
        shared_yaxes=True,
        subplot_titles=(translate("sinusoidal (Section 3.5)", lang), translate("learned", lang)),
    )
    fig.add_trace(_pe_heatmap_trace(sin, lang, coloraxis="coloraxis"), row=1, col=1)
    fig.add_trace(_pe_heatmap_trace(lrn, lang, coloraxis="coloraxis2"), row=1, col=2)
    value = translate("value", lang)
    fig.update_layout(
        coloraxis=dict(
            colorscale=DIVERGING_COLORSCALE, cmin=-1.0, cmax=1.0, colorbar=colorbar(value, x=0.415, len=0.9)
        ),
        coloraxis2=dict(
            colorscale=DIVERGING_COLORSCALE, cmin=-bound, cmax=bound, colorbar=colorbar(value, x=1.0, len=0.9)
        ),
    )
    fig.update_xaxes(title_text=translate("embedding dimension", lang), showgrid=False, zeroline=False)
    fig.update_yaxes(autorange="reversed", showgrid=False, zeroline=False)
    fig.update_yaxes(title_text=translate("position (from 0)", lang), row=1, col=1)
    return apply_theme(fig, title=title, height=520)
