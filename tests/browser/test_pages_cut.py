"""Nothing cut on the Beam, Positional, Step-by-step, Heads and Complexity pages, in a real
browser at 1024x768, 1280x720 and 1920x1080, light and dark, English and Korean, on one `python app.py`
server and one headless Chromium.

Each page is loaded once per (theme, language) and measured at every size by resizing the window. Beyond
what tests/browser/test_projector.py checks on every page (the first figure on the first screen, nothing
wider than the window, no label ending in an ellipsis), here nothing may be cut by its container: no control
or metric cut short, no segmented control broken over two rows, no figure title or label running outside its
figure or its plot area (tests/browser/clipping.py); and every text in every figure is at least 14 px.
The tour has the same checks stop by stop in tests/browser/test_tour.py.
"""

from __future__ import annotations

import pytest

from tests.browser.clipping import broken_button_rows, everything_cut
from tests.browser.helpers import (
    RENDER_TIMEOUT_MS,
    assert_no_exception,
    cut_text,
    first_figure_box,
    overflowing,
    query,
    wait_for_figure,
    wait_for_relayout,
    wait_idle,
)
from ui.pages import PAGES as APP_PAGES

SIZES = ((1024, 768), (1280, 720), (1920, 1080))
SENTENCE = "a small child sees the red dog ."
PAGES = {
    "beam": dict(beam_sentence=SENTENCE),
    "positional": dict(pe_sentence=SENTENCE),
    "step_by_step": dict(sbs_sentence=SENTENCE),
    "heads": dict(h_sentence=SENTENCE),
    "complexity": {},
}
MIN_FIGURE_TEXT_PX = 14

FIGURE_TEXT_SIZES_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stPlotlyChart"] .main-svg text'))
    .filter(e => e.textContent.trim() && e.getBoundingClientRect().width > 0 && e.checkVisibility())
    .map(e => [parseFloat(getComputedStyle(e).fontSize), e.textContent.trim().slice(0, 30)])"""


@pytest.mark.parametrize("theme, lang", [("light", "en"), ("dark", "ko"), ("light", "ko"), ("dark", "en")])
def test_nothing_is_cut_and_figure_text_is_readable(app, browser, theme, lang):
    context = browser.new_context(
        viewport={"width": 1280, "height": 720}, color_scheme=theme, locale="ko-KR" if lang == "ko" else "en-US"
    )
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    problems: list[str] = []
    try:
        for name, params in PAGES.items():
            page = context.new_page()
            page.goto(f"{app.url}/{name}?" + query(model="words-fixture", lang=lang, **params))
            wait_idle(page)
            assert_no_exception(page)
            wait_for_figure(page)
            for width, height in SIZES:
                where = f"{name} {theme} {lang} {width}x{height}"
                page.set_viewport_size({"width": width, "height": height})
                wait_for_relayout(page)  # plotly re-lays out after a resize
                box = first_figure_box(page)
                if box is None or box["y"] < 0 or box["y"] + box["height"] > height + 1:
                    problems.append(f"{where}: the first figure is not on the first screen: {box}")
                problems.extend(f"{where}: wider than the window: {f}" for f in overflowing(page))
                problems.extend(f"{where}: cut: {f}" for f in cut_text(page) + everything_cut(page))
                small = sorted({(size, text) for size, text in page.evaluate(FIGURE_TEXT_SIZES_JS)})
                small = [(size, text) for size, text in small if size < MIN_FIGURE_TEXT_PX]
                if small:
                    problems.append(f"{where}: figure text under {MIN_FIGURE_TEXT_PX} px: {small[:5]}")
            page.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)


STAGES_FIT_JS = """() => {
    const plot = document.querySelector('.st-key-sbs_stages .js-plotly-plot');
    const svg = plot && plot.querySelector('.main-svg');
    return plot && svg ? [plot.checkVisibility(), Math.round(plot.getBoundingClientRect().width),
                          Math.round(svg.getBoundingClientRect().width)] : null;
}"""


def test_a_figure_in_a_closed_expander_fits_once_opened(app, browser):
    """The Step-by-step page's stage matrices sit in a closed expander, which Chromium does not render, so the
    checks above skip it; a lecturer who resizes the window and then opens it must still see it whole."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{app.url}/step_by_step?" + query(model="words-fixture", lang="en", sbs_sentence=SENTENCE))
        wait_idle(page)
        assert_no_exception(page)
        wait_for_figure(page)
        visible, _, _ = page.evaluate(STAGES_FIT_JS)
        assert not visible, "the stage matrices' expander should start closed"
        page.set_viewport_size({"width": 1024, "height": 768})
        wait_for_relayout(page)
        page.locator("details:has(.st-key-sbs_stages) > summary").click()
        wait_for_relayout(page)
        visible, container, drawn = page.evaluate(STAGES_FIT_JS)
        assert visible
        assert drawn <= container + 1, f"opened at 1024x768, the figure is {drawn} px wide in {container} px"
        page.locator(".st-key-sbs_stages").scroll_into_view_if_needed()
        assert not everything_cut(page, '[data-testid="stMain"] .st-key-sbs_stages')
    finally:
        context.close()


SIDEBAR = '[data-testid="stSidebar"]'


@pytest.mark.parametrize("theme, lang", [("dark", "ko"), ("light", "en")])
def test_no_sidebar_button_row_breaks_at_1024(app, browser, theme, lang):
    """Every page's sidebar at 1024x768: no segmented control wrapped onto several rows. Step by step's three
    attention families did in Korean (three rows of unequal buttons, their joined borders open); in the sidebar
    they are a list of radio buttons now, as on Translate."""
    context = browser.new_context(viewport={"width": 1024, "height": 768}, color_scheme=theme)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    problems: list[str] = []
    try:
        page = context.new_page()
        for spec in APP_PAGES:
            page.goto(f"{app.url}/{spec.url_path}?" + query(model="words-fixture", lang=lang))
            wait_idle(page)
            assert_no_exception(page)
            problems.extend(f"{spec.url_path} {theme} {lang}: {row}" for row in broken_button_rows(page, SIDEBAR))
    finally:
        context.close()
    assert not problems, "\n".join(problems)
