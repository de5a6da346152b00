"""Figures for attention one stage at a time (Section 3.2, Eq. 1) and for the 1/√d_k footnote (Section 3.2.1).

Pure functions: arrays and labels in, plotly figures out. Small matrices are drawn as heat maps with their
numbers written in the cells (signed values on a diverging scale centred on zero), so a lecture can read
the real values off the slide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures import theme
from explorer.figures.attention import index_axis, pair_heatmap
from explorer.figures.memo import remembered
from explorer.i18n import translate

_ROW_PX = 40
STAGE_TITLES = ("Q·Kᵀ", "÷ √d_k", "mask (−∞ blank)", "softmax")


def stage_titles(lang: str = "en") -> tuple[str, str, str, str]:
    """`STAGE_TITLES` in `lang`."""
    return ("Q·Kᵀ", "÷ √d_k", translate("mask (−∞ blank)", lang), translate("softmax", lang))


def _statistic_title(name: str, lang: str) -> str:
    """A statistic of `explorer.analysis.step_by_step.scaling_series` as a panel title in `lang` (formulas stay)."""
    titles = {
        "largest weight": translate("largest weight", lang),
        "gradient ‖∂softmax‖": translate("gradient ‖∂softmax‖", lang),
    }
    return titles.get(name, name)


def _label_chars(labels: Sequence[str]) -> int:
    return max((len(str(label)) for label in labels), default=1)


@remembered(64)
def values_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None = None,
    *,
    title: str | None = None,
    x_title: str | None = None,
    y_title: str = "",
    decimals: int = 2,
    colorbar_title: str | None = None,
    bound: float | None = None,
    width: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """A small signed matrix values (rows, cols) with its numbers in the cells; colours symmetric around 0.

    Columns default to dimension indices 0..cols-1. `bound` fixes the colour range to [-bound, bound]
    (default: the largest absolute value), so two figures can share a scale. The numbers are written only
    when they fit the cells at a readable size in a figure `width` px wide (default: the narrowest page
    column); otherwise they are on hover. `x_title` defaults to "dimension", the colour bar to "value".
    """
    x_title = translate("dimension", lang) if x_title is None else x_title
    colorbar_title = translate("value", lang) if colorbar_title is None else colorbar_title
    m = np.atleast_2d(np.asarray(values, dtype=float))
    rows, cols = m.shape
    assert len(row_labels) == rows, f"expected {rows} row labels, got {len(row_labels)}"
    columns = [str(c) for c in range(cols)] if col_labels is None else list(col_labels)
    assert len(columns) == cols, f"expected {cols} column labels, got {len(columns)}"
    limit = theme.diverging_limit(m, bound)
    # A title over several lines takes its room from above the plot (theme.apply_theme), not from the rows.
    height = max(220, _ROW_PX * rows + 170) + 2 * theme.TITLE_SIZE * (title or "").count("<br>")
    write = theme.numbers_fit(
        rows,
        cols,
        height=height,
        sample=f"-{limit:.{decimals}f}",
        title=bool(title),
        row_label_chars=_label_chars(row_labels),
        **({"width": width} if width else {}),
    )
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=np.arange(cols),
            y=np.arange(rows),
            colorscale=theme.DIVERGING_COLORSCALE,
            zmin=-limit,
            zmax=limit,
            texttemplate=f"%{{z:.{decimals}f}}" if write else None,
            textfont=dict(size=theme.CELL_TEXT_SIZE),
            xgap=2,
            ygap=2,
            colorbar=theme.colorbar(colorbar_title),
            showscale=rows > 2,  # a one-row strip has no room for a colour bar
            customdata=np.broadcast_to(
                np.asarray(theme.escape_labels(row_labels), dtype=object)[:, None], (rows, cols)
            ),
            hovertemplate="%{customdata}, " + x_title + " %{x}: %{z:.4f}<extra></extra>",
        )
    )
    fig.update_xaxes(title_text=x_title, **index_axis(columns))
    fig.update_yaxes(title_text=y_title, **index_axis(row_labels, reverse=True))
    return theme.apply_theme(fig, title=title, height=height)


@remembered()
def stage_matrices(
    scores: np.ndarray,
    scaled: np.ndarray,
    masked: np.ndarray,
    weights: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    query_index: int,
    *,
    title: str | None = None,
    show_values: bool | None = None,
    width: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """One head's four (q, k) stages side by side: Q·Kᵀ, ÷√d_k, masked, softmax; the chosen query row framed.

    The three score panels share one diverging colour axis (masked cells are blank); softmax has its own
    [0, 1] scale. Values are written in the cells when they fit at a readable size in a figure `width` px
    wide (default: the narrowest page column); show_values=False never writes them.
    """
    stages = [np.asarray(a, dtype=float) for a in (scores, scaled, masked, weights)]
    q, k = stages[0].shape
    for a in stages:
        assert a.shape == (q, k), f"expected every stage of shape {(q, k)}, got {a.shape}"
    assert len(query_labels) == q and len(key_labels) == k, (
        f"expected {q} query and {k} key labels, got {len(query_labels)} and {len(key_labels)}"
    )
    assert 0 <= query_index < q, f"query_index {query_index} out of range 0..{q - 1}"
    height = max(380, 30 * q + 220)
    write = show_values is not False and theme.numbers_fit(
        q,
        k,
        height=height,
        sample="-0.00",
        size=theme.CELL_TEXT_SIZE,
        panels=4,
        title=bool(title),
        row_label_chars=_label_chars(query_labels),
        **({"width": width} if width else {}),
    )
    titles = stage_titles(lang)
    bound = theme.diverging_limit(np.concatenate([np.ravel(a) for a in stages[:3]]))  # the three score panels'
    fig = make_subplots(rows=1, cols=4, shared_yaxes=True, horizontal_spacing=0.03, subplot_titles=titles)
    for col, (z, name) in enumerate(zip(stages, titles, strict=False), start=1):
        z = np.where(np.isfinite(z), z, np.nan)
        fig.add_trace(
            pair_heatmap(
                z,
                query_labels,
                key_labels,
                name=name,
                coloraxis="coloraxis2" if col == 4 else "coloraxis",
                texttemplate=("%{z:.2f}" if write else None),
                textfont=dict(size=theme.CELL_TEXT_SIZE),
                xgap=1,
                ygap=1,
                hovertemplate=f"{name}<br>%{{customdata[0]}} \u2192 %{{customdata[1]}}: %{{z:.4f}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.add_shape(
            type="rect",
            x0=-0.5,
            x1=k - 0.5,
            y0=query_index - 0.5,
            y1=query_index + 0.5,
            line=dict(color="#f59e0b", width=3),
            row=1,
            col=col,
        )
    fig.update_layout(
        coloraxis=dict(
            colorscale=theme.DIVERGING_COLORSCALE,
            cmin=-bound,
            cmax=bound,
            colorbar=theme.colorbar(translate("score", lang), x=1.0, len=0.45, y=0.75),
        ),
        coloraxis2=dict(
            colorscale=theme.WEIGHT_COLORSCALE,
            cmin=0.0,
            cmax=1.0,
            colorbar=theme.colorbar(translate("weight", lang), x=1.0, len=0.45, y=0.22),
        ),
    )
    fig.update_xaxes(**index_axis(key_labels))
    fig.update_yaxes(**index_axis(query_labels, reverse=True))
    fig.update_yaxes(title_text=translate("query", lang), row=1, col=1)
    theme.apply_theme(fig, title=title, height=height)
    return fig


@remembered()
def query_row_figure(
    scaled: np.ndarray,
    allowed: np.ndarray,
    weights: np.ndarray,
    key_labels: Sequence[str],
    *,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """One query's row: scaled scores (top; masked keys marked ✕) and the softmax weights they become (bottom)."""
    scaled, weights = np.asarray(scaled, dtype=float), np.asarray(weights, dtype=float)
    allowed = np.asarray(allowed, dtype=bool)
    k = len(key_labels)
    assert scaled.shape == weights.shape == allowed.shape == (k,), (
        f"expected ({k},) arrays, got {scaled.shape}, {allowed.shape}, {weights.shape}"
    )
    kl = theme.escape_labels(key_labels)
    x = np.arange(k)
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=(translate("scaled score", lang) + " q·k / √d_k", translate("softmax weight", lang)),
    )
    labelled = k <= 16  # numbers on the bars only while they stay legible
    fig.add_trace(
        go.Bar(
            x=x[allowed],
            y=scaled[allowed],
            marker_color=theme.color(0),
            name=translate("scaled score", lang),
            text=[f"{v:.2f}" for v in scaled[allowed]] if labelled else None,
            textposition="outside",
            textfont=dict(size=theme.TICK_SIZE - 2),
            cliponaxis=False,
            customdata=np.asarray(kl, dtype=object)[allowed],
            hovertemplate="%{customdata}: %{y:.4f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    if (~allowed).any():
        fig.add_trace(
            go.Scatter(
                x=x[~allowed],
                y=np.zeros(int((~allowed).sum())),
                mode="markers",
                name=translate("masked", lang) + " (−∞)",
                marker=dict(symbol="x", size=14, color="#94a3b8"),
                hovertemplate=translate("masked", lang) + ": −∞<extra></extra>",
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        go.Bar(
            x=x,
            y=weights,
            marker_color=theme.color(1),
            name=translate("softmax weight", lang),
            text=[f"{v:.2f}" for v in weights] if labelled else None,
            textposition="outside",
            textfont=dict(size=theme.TICK_SIZE - 2),
            cliponaxis=False,
            customdata=kl,
            hovertemplate="%{customdata}: %{y:.4f}<extra></extra>",
        ),
        row=2,
        col=1,
    )
    fig.update_xaxes(tickmode="array", tickvals=list(x), ticktext=kl, range=[-0.6, k - 0.4])
    fig.update_yaxes(range=[0, 1.15], row=2, col=1)
    span = float(np.abs(scaled[allowed]).max()) if allowed.any() else 1.0
    fig.update_yaxes(
        range=[
            min(0.0, scaled[allowed].min() if allowed.any() else 0) - 0.25 * span,
            max(0.0, scaled[allowed].max() if allowed.any() else 0) + 0.25 * span,
        ],
        row=1,
        col=1,
    )
    fig.update_layout(showlegend=False)
    return theme.apply_theme(fig, title=title, height=560)


@remembered()
def scaling_figure(
    d_ks: Sequence[int],
    unscaled: Mapping[str, Sequence[float]],
    scaled: Mapping[str, Sequence[float]],
    *,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Statistics against d_k (log axis), one panel per entry of `unscaled`/`scaled` (same keys, e.g.
    "Var(logit)", "largest weight", "‖∂softmax‖"): without scaling (one colour) and with 1/√d_k (another)."""
    names = list(unscaled)
    assert names == list(scaled), f"expected the same statistics, got {names} and {list(scaled)}"
    x = np.asarray(d_ks, dtype=float)
    fig = make_subplots(
        rows=1, cols=len(names), subplot_titles=[_statistic_title(n, lang) for n in names], horizontal_spacing=0.08
    )
    for col, name in enumerate(names, start=1):
        for series, label, hue, dash in (
            (unscaled[name], "q·k " + translate("(no scaling)", lang), theme.color(2), "solid"),
            (scaled[name], "q·k / √d_k (Eq. 1)", theme.color(0), "dash"),
        ):
            y = np.asarray(series, dtype=float)
            assert y.shape == x.shape, f"{name}: expected {x.shape[0]} values, got {y.shape}"
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=y,
                    mode="lines+markers",
                    name=label,
                    legendgroup=label,
                    showlegend=col == 1,
                    line=dict(color=hue, width=3, dash=dash),
                    marker=dict(size=8),
                    hovertemplate=f"{name}<br>d_k = %{{x}}: %{{y:.4g}}<extra>{label}</extra>",
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(
            type="log",
            title_text="d_k",
            row=1,
            col=col,
            tickvals=[v for v in (1, 4, 16, 64, 256, 1024, 4096) if x.min() <= v <= x.max()],
        )
    fig.update_yaxes(type="log", dtick=1, row=1, col=1)
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.12, x=0.0))
    theme.apply_theme(fig, title=title, height=460)
    # Room for the legend row above the panels, under a title of one line or more.
    fig.update_layout(margin=dict(t=130 + 2 * theme.TITLE_SIZE * (title or "").count("<br>")))
    return fig


@remembered()
def softmax_comparison(
    unscaled: np.ndarray, scaled: np.ndarray, *, d_k: int, title: str | None = None, lang: str = "en"
) -> go.Figure:
    """One random query's softmax over its keys without and with 1/√d_k, as grouped bars."""
    a, b = np.asarray(unscaled, dtype=float), np.asarray(scaled, dtype=float)
    assert a.shape == b.shape and a.ndim == 1, f"expected two equal (keys,) arrays, got {a.shape}, {b.shape}"
    keys = [f"k{j + 1}" for j in range(a.shape[0])]
    plain, scaled_name = translate("no scaling", lang), translate("scaled", lang)
    fig = go.Figure(
        [
            go.Bar(
                x=keys,
                y=a,
                name=f"softmax(q·k), {plain}",
                marker_color=theme.color(2),
                hovertemplate=f"%{{x}}: %{{y:.4f}}<extra>{plain}</extra>",
            ),
            go.Bar(
                x=keys,
                y=b,
                name="softmax(q·k / √d_k)",
                marker_color=theme.color(0),
                hovertemplate=f"%{{x}}: %{{y:.4f}}<extra>{scaled_name}</extra>",
            ),
        ]
    )
    fig.update_layout(barmode="group", legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0.0))
    fig.update_xaxes(title_text=translate("key", lang))
    fig.update_yaxes(title_text=translate("attention weight", lang), range=[0, 1.05])
    return theme.apply_theme(fig, title=title or translate("One random query, d_k = {d_k}", lang, d_k=d_k), height=420)
