"""The page layout for a projector: the figure on the first screen.

A page draws its title with `page_header`, which puts the explanation into a collapsed expander, and its
controls into `controls()`: a slot at the top of the sidebar that the frame makes (the page list is in the top
bar), in presenter mode a popover on the page. The frame's `compact_style` trims Streamlit's
generous top padding and title size, which alone take a fifth of a 720 px screen.

Figures are capped with `fit_height` so a figure drawn under a title, a translation and one row of pickers
still ends inside 720 px.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from explorer.figures.theme import TITLE_SIZE, numbers_fit, text_width_px, wrap_words
from ui.i18n import t
from ui.presenter import font_scale, presenter_bar

_SLOT = "_page_controls"
# The tallest a page's main figure may be: 720 px less the top padding, a title, one translation line
# and one row of pickers (measured at 1280x720, see tests/browser/test_sweep.py).
FIRST_SCREEN_FIGURE_PX = 440
# The main area of a 1024 px window beside the sidebar (about 615 px, measured), and of a 1024 px projector in
# presenter mode, which hides the sidebar (the window less the page's padding). The sidebar starts collapsed
# at 1024 px (`COLLAPSE_BELOW_PX`), but a lecturer may open it: titles are wrapped for the narrower area.
MAIN_AREA_PX = 600
PRESENTER_MAIN_PX = 940
# The narrowest a page's figure gets: three quarters of the main area at 1024 px beside the sidebar.
NARROW_COLUMN_PX = 460

# Below this window width the sidebar (338 px) leaves a page's figure less than 560 px (Translate's heatmap
# column is 3/4.35 of the main area): the sidebar starts collapsed there, and its arrow opens it. Streamlit's
# `initial_sidebar_state="auto"` collapses it only on phones (768 px), and the server does not know the window.
COLLAPSE_BELOW_PX = 1200
# Less air above the page and a smaller page title: on a 720 px projector Streamlit's defaults (6 rem of
# padding, a 2.75 rem title) leave little room for the figure. The header holds the page list (the top bar,
# 3.1 rem high, drawn over the main area): it is made no taller than that, and the page starts 0.1 rem below
# it (a smaller top padding put the page title under the bar, its top cut off). Below the width at which the
# sidebar starts collapsed the page keeps less air at its sides, for the figure.
_COMPACT_CSS = """<style>
[data-testid="stHeader"] { height: 3.1rem; min-height: 3.1rem; }
[data-testid="stMainBlockContainer"] { padding: 3.2rem 2rem 2rem 2rem; }
@media (max-width: NARROW_WINDOW_PX) {
  [data-testid="stMainBlockContainer"] { padding-left: 1rem; padding-right: 1rem; } }
[data-testid="stMain"] h1 { font-size: 1.7rem; padding: 0 0 0.25rem 0; }
[data-testid="stMain"] [data-testid="stHeading"] h2 { font-size: 1.35rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] :is(h2, h3) { font-size: 1.35rem; padding: 0; }
[data-testid="stSidebarHeader"] { height: 2.5rem; margin-bottom: 0; }
[data-testid="stSidebarUserContent"] { padding-top: 0.5rem; }
/* Segmented controls wrap onto a second line in a narrow column instead of scrolling their buttons away. */
[data-testid="stButtonGroup"], [data-testid="stButtonGroup"] > div { flex-wrap: wrap; overflow: visible; }
/* ...and a label too long for its button wraps inside it rather than being cut. Less side padding than
   Streamlit's: four head numbers fit on one row beside Translate's heatmap at 1024 px. */
[data-testid="stButtonGroup"] button {
  height: auto; max-width: 100%; min-width: 2.4rem; padding-left: 0.65rem; padding-right: 0.65rem; }
[data-testid="stButtonGroup"] button, [data-testid="stButtonGroup"] button * {
  white-space: normal; overflow: visible; text-overflow: clip; }
.st-key-fit_sidebar { display: none; }
/* Presenter mode (ui/presenter.py draws the marker, its bar): no sidebar, the whole width for the figure; the
   bar sits in Streamlit's header, right of the page list, and takes no height from the page. */
body:has(.st-key-present_on) :is([data-testid="stSidebar"], [data-testid="stExpandSidebarButton"]) {
  display: none; }
body:has(.st-key-present_on) [data-testid="stMainBlockContainer"] { max-width: 100%; }
.st-key-present_on {
  position: fixed; top: 0.35rem; right: 3.5rem; left: auto; width: fit-content !important; z-index: 999991; }
.st-key-present_keys { display: none; }
</style>""".replace("NARROW_WINDOW_PX", f"{COLLAPSE_BELOW_PX - 0.02}px")


def compact_style() -> None:
    st.html(_COMPACT_CSS)


def make_controls_slot() -> None:
    """Called by the frame before the page runs: where `controls()` draws. First in the sidebar; in presenter
    mode, which hides the sidebar, a "Controls" popover in the presenter's bar, so the lecturer changes the
    sentence, the decoding and the view without leaving presenter mode."""
    popover = presenter_bar()
    if popover is not None:
        st.session_state[_SLOT] = popover
        return
    with st.sidebar:
        st.session_state[_SLOT] = st.container()


def controls() -> Any:
    """The slot for the current page's controls (the sidebar itself when the frame made none)."""
    return st.session_state.get(_SLOT) or st.sidebar


# Once per page document (a rerun or a page switch keeps the document, so a sidebar the lecturer opened stays
# open); the collapse button is drawn a moment after the first elements, so it is looked for a few times. A
# window that becomes narrow later (a laptop's browser moved onto the projector, or made smaller) collapses it
# when it crosses the width, not on every resize, so a sidebar opened at the narrow width stays open.
_FIT_SIDEBAR_JS = """<script>
if (!document.__sidebarFitted) {
  document.__sidebarFitted = true;
  // Until either button is drawn: then click "collapse" if the sidebar is open, and stop (a loop that went on
  // looking for an open sidebar would close the one the lecturer opens in the next seconds).
  const collapse = (tries) => {
    const expand = document.querySelector('[data-testid="stExpandSidebarButton"]');
    if (expand && expand.checkVisibility()) return;
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (button) { if (button.getAttribute('aria-expanded') === 'true') button.click(); return; }
    if (tries < 50) setTimeout(() => collapse(tries + 1), 100);
  };
  const narrow = window.matchMedia('(max-width: NARROW_WINDOW_PX)');
  if (narrow.matches) collapse(0);
  narrow.addEventListener('change', (event) => { if (event.matches) collapse(0); });
}
</script>""".replace("NARROW_WINDOW_PX", f"{COLLAPSE_BELOW_PX - 0.02}px")


def fit_sidebar_to_window() -> None:
    """Collapse the sidebar on a window narrower than `COLLAPSE_BELOW_PX` (a 1024 px projector), once."""
    with st.container(key="fit_sidebar"):  # hidden by the page style: the script runs, the sidebar keeps its layout
        st.html(_FIT_SIDEBAR_JS, unsafe_allow_javascript=True)


def page_header(
    title: str, intro: str | None = None, *, formula: str | None = None, label: str = "About this page"
) -> None:
    """The page's title, and its explanation in a collapsed expander at the top of the sidebar (translated
    strings in)."""
    st.title(title)
    if intro:  # in the sidebar: the main area keeps its height for the figure
        with controls().expander(t(label)):
            st.markdown(intro)
            if formula:
                st.latex(formula)


def section_header(title: str, intro: str) -> None:
    """A section's heading and the paragraph that opens it, in the main area (translated strings in)."""
    st.header(title)
    st.markdown(intro)


def wrap_title(fig: go.Figure, width: int = NARROW_COLUMN_PX) -> go.Figure:
    """Break a title that would run past a `width` px figure at its last " · " (else " — ", else ", ") that
    fits (in place): plotly does not wrap titles, it cuts them at the figure's edge. Where no separator leaves a
    first line that fits (the Korean cross-attention title, "인코더-디코더 어텐션 (cross-attention) · 레이어 3 ·
    헤드 1", was cut at "레이" at 1024x768), it breaks between words, over as many lines as it takes.

    A Korean title that would take three lines or more is drawn without its glossary term's English gloss
    ("(cross-attention)"): at 1024x768 that third line took the height of two heatmap rows from a 13-token
    caption, whose labels then ran into each other. The pickers beside the figure name the term whole."""
    text = fig.layout.title.text
    size = fig.layout.title.font.size or TITLE_SIZE
    if not text or "<br>" in text or text_width_px(text, size) <= width - 20:
        return fig
    wrapped = _wrapped(text, width - 20, size)
    shorter = _GLOSS.sub("", text)
    if wrapped.count("<br>") >= 2 and shorter != text and _HANGUL.search(shorter):
        wrapped = shorter if text_width_px(shorter, size) <= width - 20 else _wrapped(shorter, width - 20, size)
    return _set_title(fig, wrapped, size)


_GLOSS = re.compile(r" \([^()]*[A-Za-z][^()]*\)")  # " (cross-attention)": the English of a glossary term
_HANGUL = re.compile("[\uac00-\ud7a3]")


def _wrapped(text: str, width: float, size: float) -> str:
    """`text` broken into lines of at most `width` px: at one separator where two lines do; else by whole parts
    or, where that takes more lines, word by word across parts ("Decoder self-attention<br>(masked) · layer 3 ·
    head 1" in two lines, not three with "(masked)" alone on one)."""
    for separator in (" \u00b7 ", " \u2014 ", ", "):
        parts = text.split(separator)
        for cut in range(len(parts) - 1, 0, -1):
            head, rest = separator.join(parts[:cut]), separator.join(parts[cut:])
            if text_width_px(head, size) <= width and text_width_px(rest, size) <= width:
                return head + "<br>" + rest
    by_parts, by_words = _by_parts(text, width, size), wrap_words(text, width, size)
    return by_words if by_words.count("<br>") < by_parts.count("<br>") else by_parts


def _by_parts(text: str, width: float, size: float) -> str:
    """Lines of whole " · " parts where they fit; a part too wide for a line alone gets lines of its own, broken
    between words, so "레이어 3 · 헤드 1" stays together after a family name that had to be broken."""
    lines: list[str] = []
    current = ""
    for part in text.split(" \u00b7 "):
        candidate = f"{current} \u00b7 {part}" if current else part
        if text_width_px(candidate, size) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
        current = part
        if text_width_px(part, size) > width:
            lines.extend(wrap_words(part, width, size).split("<br>"))
            current = ""
    return "<br>".join(lines + ([current] if current else []))


def _set_title(fig: go.Figure, text: str, size: float) -> go.Figure:
    """The wrapped title, and room above the plot for each line it gained."""
    extra = text.count("<br>")
    fig.update_layout(title_text=text, margin_t=(fig.layout.margin.t or 80) + int(1.3 * size) * extra)
    return fig


def figure_column_px(share: float = 0.75, gap: int = 0) -> int:
    """How wide a page's figure column is at least, in the figure's own px: `share` of the main area less the
    `gap` (px) between its columns; beside the sidebar at most `NARROW_COLUMN_PX` (three quarters of the main area
    of a 1024 px window); in presenter mode, which hides the sidebar, of a 1024 px projector's main area, less the
    presenter's larger text (`show_figure` scales every text by `font_scale`, so a title wrapped for this width
    still fits). Translate's heatmap column (3 : 1.35 beside its pickers, a medium gap) is 406 px at 1024x768."""
    scale = font_scale()  # above 1 exactly in presenter mode
    if scale == 1.0:
        return min(NARROW_COLUMN_PX, int(NARROW_COLUMN_PX / 0.75 * share) - gap)
    return int((PRESENTER_MAIN_PX * share - gap) / scale)


COLUMN_GAP_PX = 16  # st.columns(gap="medium"): 1 rem


def main_area_px() -> int:
    """How wide a figure across the whole main area is at least, in the figure's own px (as `figure_column_px`)."""
    scale = font_scale()
    return MAIN_AREA_PX if scale == 1.0 else int(PRESENTER_MAIN_PX / scale)


def fit_height(fig: go.Figure, limit: int = FIRST_SCREEN_FIGURE_PX, width: int | None = None) -> go.Figure:
    """Cap the figure's height at `limit` px (in place), so it ends on the first screen, and wrap a title
    too wide for a `width` px column (default: the figure column of the current layout, `figure_column_px`).

    Presenter mode hides the sidebar: wrapping there at the narrow column's width broke the Korean
    cross-attention title onto three lines, and the rows of a 13-token heatmap got 11.5 px for 18 px labels."""
    width = figure_column_px() if width is None else width
    wrap_title(fig, width)
    height = fig.layout.height or 450
    if height > limit:
        fig.update_layout(height=limit)
        # Numbers written in heatmap cells were sized for the taller figure: keep them only where they still fit.
        for trace in fig.data:
            if trace.type == "heatmap" and trace.texttemplate:
                rows, cols = np.shape(trace.z)
                if not numbers_fit(rows, cols, height=limit, title=bool(fig.layout.title.text)):
                    trace.texttemplate = None
    return fig
