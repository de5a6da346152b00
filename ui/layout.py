"""The page layout for a projector: the figure on the first screen (issue 15.1).

A page draws its title with `page_header`, which puts the explanation into a collapsed expander, and its
controls into `controls()`: a slot at the top of the sidebar that the frame makes before the page list
(so a page's controls are the first thing in the sidebar). The frame's `compact_style` trims Streamlit's
generous top padding and title size, which alone take a fifth of a 720 px screen.

Figures are capped with `fit_height` so a figure drawn under a title, a translation and one row of pickers
still ends inside 720 px.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from explorer.figures.theme import numbers_fit
from ui.i18n import t

_SLOT = "_page_controls"
# The tallest a page's main figure may be: 720 px less the top padding, a title, one translation line
# and one row of pickers (measured at 1280x720, see tests/test_browser_projector.py).
FIRST_SCREEN_FIGURE_PX = 440

# Less air above the page and a smaller page title: on a 720 px projector Streamlit's defaults (6 rem of
# padding, a 2.75 rem title) leave little room for the figure. The header bar stays where it is.
_COMPACT_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.2rem; padding-bottom: 2rem; }
[data-testid="stMain"] h1 { font-size: 1.7rem; padding: 0 0 0.25rem 0; }
[data-testid="stMain"] [data-testid="stHeading"] h2 { font-size: 1.35rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] h2 { font-size: 1.6rem; padding: 0.1rem 0; }
[data-testid="stSidebarHeader"] { height: 2.5rem; margin-bottom: 0; }
[data-testid="stSidebarUserContent"] { padding-top: 0.5rem; }
</style>"""


def compact_style() -> None:
    st.html(_COMPACT_CSS)


def make_controls_slot() -> None:
    """Called by the frame, in the sidebar, before the page list: where `controls()` draws."""
    st.session_state[_SLOT] = st.container()


def controls():
    """The sidebar slot for the current page's controls (the sidebar itself when the frame made none)."""
    return st.session_state.get(_SLOT) or st.sidebar


def page_header(title: str, intro: str | None = None, *, label: str = "About this page") -> None:
    """The page's title, and its explanation in a collapsed expander at the top of the sidebar (translated
    strings in)."""
    st.title(title)
    if intro:  # in the sidebar: the main area keeps its height for the figure
        with controls().expander(t(label)):
            st.markdown(intro)


def fit_height(fig: go.Figure, limit: int = FIRST_SCREEN_FIGURE_PX) -> go.Figure:
    """Cap the figure's height at `limit` px (in place), so it ends on the first screen."""
    height = fig.layout.height or 450
    if height <= limit:
        return fig
    fig.update_layout(height=limit)
    # Numbers written in heatmap cells were sized for the taller figure: keep them only where they still fit.
    for trace in fig.data:
        if trace.type == "heatmap" and trace.texttemplate:
            rows, cols = np.shape(trace.z)
            if not numbers_fit(rows, cols, height=limit, title=bool(fig.layout.title.text)):
                trace.texttemplate = None
    return fig
