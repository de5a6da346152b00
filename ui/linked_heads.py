"""Synchronized heads on a page: the Altair charts of `explorer.figures.linked_heads`, drawn in
the page's language, light or dark theme and presenter text size.

The hover highlight runs in the browser (a Vega-Lite selection), so moving the pointer never reruns the
script. Vega-Lite cannot shrink a multi-view chart to its column, so the chart is built for the narrowest
main column (the 1024 px window beside the sidebar), or the whole width when presenter mode hides the sidebar.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import streamlit as st

from explorer.figures.compare import Panel
from explorer.figures.linked_heads import LinkedLook, linked_grid, linked_heads
from explorer.figures.theme import HOVER_SIZE
from ui.figures import page_theme
from ui.i18n import current_language, t
from ui.layout import FIRST_SCREEN_FIGURE_PX, MAIN_AREA_PX, PRESENTER_MAIN_PX
from ui.presenter import font_scale, presenter_on


def _look(zmax: float | None, title: str | None, share: float) -> LinkedLook:
    """The page's look for a chart `share` of the main column wide (3/4 beside a picker column): its language,
    theme, width, height and text scale."""
    return LinkedLook(
        zmax=zmax,
        title=title,
        lang=current_language(),
        theme=page_theme(),
        width=int((PRESENTER_MAIN_PX if presenter_on() else MAIN_AREA_PX) * share),
        height=FIRST_SCREEN_FIGURE_PX,
        text_scale=font_scale(),
    )


# Vega's tooltip (one element per page, drawn by Streamlit) at the figures' hover size: its default 12 px is
# under the 14 px a projector needs.
_TOOLTIP_CSS = f"<style>#vg-tooltip-element, #vg-tooltip-element td {{ font-size: {HOVER_SIZE}px; }}</style>"


def hover_hint() -> None:
    st.html(_TOOLTIP_CSS)
    st.caption(t("Point at a row in any head: the same query token lights up in every head, on one colour scale."))


def show_linked_heads(
    panels: Sequence[Panel], *, key: str, zmax: float | None = 1.0, title: str | None = None, share: float = 1.0
) -> None:
    """Two to four heads (`Panel`s, weights (q, k)) side by side, linked by the hovered query."""
    chart = linked_heads(panels, _look(zmax, title, share))
    # theme=None: the chart carries the app's own look (text colour of the page theme, 16 px ticks);
    # Streamlit's chart theme would draw axis text in a grey under 4.5:1 on white.
    st.altair_chart(chart, theme=None, key=key, width="content")
    hover_hint()


def show_linked_grid(
    weights: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    key: str,
    zmax: float | None = 1.0,
    title: str | None = None,
    share: float = 1.0,
) -> None:
    """Every head of every layer, weights (layers, heads, q, k), linked by the hovered query; `share` is the
    part of the main column the chart sits in (0.75 in the translate page's figure column)."""
    chart = linked_grid(weights, query_labels, key_labels, _look(zmax, title, share))
    st.altair_chart(chart, theme=None, key=key, width="content")
    hover_hint()
