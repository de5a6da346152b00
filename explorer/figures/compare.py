"""Attention heads side by side: two to four matrices in one figure, on one colour scale.

Each panel keeps the conventions of `explorer.figures.attention`: rows are queries from the top, columns
are keys, both in token order, indexed by position with the token text as tick labels. All panels share a
single colour axis (one colour bar), so the same colour means the same weight in every panel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.attention import _check, index_axis, pair_heatmap
from explorer.figures.theme import WEIGHT_COLORSCALE, apply_theme, colorbar, escape_labels
from explorer.i18n import translate

_ROW_PX = 30  # height per token row


@dataclass(frozen=True)
class Panel:
    """One head's weights (q, k) with its token labels and a title ("Cross-attention · layer 2 · head 1")."""

    weights: np.ndarray
    query_labels: Sequence[str]
    key_labels: Sequence[str]
    title: str
    query_title: str = "query"
    key_title: str = "key"


def panel_grid(n: int) -> tuple[int, int]:
    """(rows, columns) for n panels: one row up to three, two by two for four."""
    assert 1 <= n <= 4, f"expected 1 to 4 panels, got {n}"
    return (2, 2) if n == 4 else (1, n)


def shared_zmax(panels: Sequence[Panel]) -> float:
    """The largest weight over all panels: a common colour range that still uses the whole scale."""
    return float(max(np.asarray(p.weights).max() for p in panels)) or 1.0


def compare_heads(
    panels: Sequence[Panel], *, zmax: float | None = 1.0, title: str | None = None, lang: str = "en"
) -> go.Figure:
    """Two to four attention matrices side by side (one row, or 2 x 2 for four) on one colour axis.

    zmax fixes the top of the shared colour range (default 1.0, the largest possible weight);
    None uses the largest weight over all panels (`shared_zmax`). A panel that reads the same query tokens
    as the one to its left leaves out its row labels (the rows line up). There is one heatmap trace per
    panel, in panel order, each with meta={"panel": i} and the panel title as its name. Axis titles in the
    catalogue (the default "query" and "key") are shown in `lang`; panel titles are the caller's.
    """
    assert 1 <= len(panels) <= 4, f"expected 1 to 4 panels, got {len(panels)}"
    weights = [_check(p.weights, 2, p.query_labels, p.key_labels, "(q, k)") for p in panels]
    rows, cols = panel_grid(len(panels))
    top = shared_zmax(panels) if zmax is None else float(zmax)
    repeats = [
        i % cols > 0
        and list(panels[i - 1].query_labels) == list(p.query_labels)
        and panels[i - 1].query_title == p.query_title
        for i, p in enumerate(panels)
    ]
    spacing = 0.0 if cols == 1 else (0.04 if all(repeats[i] for i in range(len(panels)) if i % cols) else 0.12)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[escape_labels([p.title])[0] for p in panels],
        horizontal_spacing=spacing,
        vertical_spacing=0.16,
    )
    tallest = 1
    for i, (panel, w) in enumerate(zip(panels, weights, strict=False)):
        row, col = divmod(i, cols)
        q, k = w.shape
        tallest = max(tallest, q)
        fig.add_trace(
            pair_heatmap(
                w,
                panel.query_labels,
                panel.key_labels,
                coloraxis="coloraxis",
                name=panel.title,
                meta=dict(panel=i),
                xgap=1,
                ygap=1,
                hovertemplate=f"{escape_labels([panel.title])[0]}<br>"
                "%{customdata[0]} \u2192 %{customdata[1]}: %{z:.4f}<extra></extra>",
            ),
            row=row + 1,
            col=col + 1,
        )
        fig.update_xaxes(
            title_text=translate(panel.key_title, lang), row=row + 1, col=col + 1, **index_axis(panel.key_labels)
        )
        repeat = repeats[i]  # the same rows as the panel to the left: its labels serve both
        fig.update_yaxes(
            title_text=None if repeat else translate(panel.query_title, lang),
            showticklabels=not repeat,
            row=row + 1,
            col=col + 1,
            **index_axis(panel.query_labels, reverse=True),
        )
    fig.update_layout(
        coloraxis=dict(colorscale=WEIGHT_COLORSCALE, cmin=0.0, cmax=top, colorbar=colorbar(translate("weight", lang)))
    )
    apply_theme(fig, title=title, height=rows * max(360, _ROW_PX * tallest + 150) + (60 if title else 0))
    return fig
