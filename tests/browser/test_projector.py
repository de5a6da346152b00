"""Ready for the projector: every page in a real browser at 1024x768, 1280x720 and 1920x1080, light
and dark, English and Korean, on one `python app.py` server and one headless Chromium.

Each page is loaded once per (theme, language) and measured at every size by resizing the window (Streamlit
does not rerun on a resize; plotly re-lays out): the first figure lies inside the first screen at 1280x720
and 1024x768 (and 1920x1080), nothing is wider than the window, no label is cut, no request leaves the
machine; `?lang=ko` shows Korean and none of the catalogue's English; presenter mode draws figure text at
18 px or more and PageDown moves to the next head.
"""

from __future__ import annotations

import re

import pytest

from explorer.i18n import _catalogue
from tests.browser.helpers import (
    RENDER_TIMEOUT_MS,
    RequestLog,
    assert_no_exception,
    cut_text,
    first_figure_box,
    overflowing,
    query,
    wait_for_figure,
    wait_for_relayout,
    wait_idle,
)
from ui.pages import PAGES

SIZES = ((1280, 720), (1024, 768), (1920, 1080))
SENTENCE = "a small child sees the red dog ."
# Pages whose first screen holds a figure. The Train page starts with a form (a figure appears once a run
# trains); it is still checked for overflow, cut labels and requests.
NO_FIGURE = {"train"}
# Every page on the fixture checkpoint with a sentence, so each draws its figure.
PAGE_QUERY = {
    "translate": dict(sentence=SENTENCE),
    "compare": dict(c_sentence=SENTENCE),
    "heads": dict(h_sentence=SENTENCE),
    "step_by_step": dict(sbs_sentence=SENTENCE),
    "beam": dict(beam_sentence=SENTENCE),
    "tour": dict(tour_sentence=SENTENCE),
}


def page_url(app, url_path: str, **extra: str) -> str:
    return f"{app.url}/{url_path}?" + query(model="words-fixture", **PAGE_QUERY.get(url_path, {}), **extra)


def open_page(context, url: str):
    page = context.new_page()
    page.goto(url, timeout=RENDER_TIMEOUT_MS)
    wait_idle(page)
    assert_no_exception(page)
    return page


def measure_all_sizes(page, url_path: str, problems: list[str], label: str) -> None:
    if url_path not in NO_FIGURE:
        wait_for_figure(page)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        wait_for_relayout(page)  # plotly re-lays out after a resize
        where = f"{url_path} {label} {width}x{height}"
        if url_path not in NO_FIGURE:
            box = first_figure_box(page)
            if box is None:
                problems.append(f"{where}: no figure")
            elif box["y"] < 0 or box["y"] + box["height"] > height + 1:
                problems.append(f"{where}: first figure spans y = {box['y']:.0f}..{box['y'] + box['height']:.0f} px")
        for found in overflowing(page):
            problems.append(f"{where}: wider than the window: {found}")
        for found in cut_text(page):
            problems.append(f"{where}: cut: {found}")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_page_fits_the_first_screen_and_stays_offline(app, browser, theme):
    """Light and dark (the page's prefers-color-scheme picks Streamlit's theme), at the three sizes."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, color_scheme=theme)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(context)
    problems: list[str] = []
    try:
        for spec in PAGES:
            page = open_page(context, page_url(app, spec.url_path))
            background = page.evaluate(
                "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
            )
            level = sum(int(v) for v in re.findall(r"\d+", background)[:3])
            assert (level < 200) == (theme == "dark"), f"{spec.url_path}: the {theme} theme draws {background}"
            measure_all_sizes(page, spec.url_path, problems, theme)
            page.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert requests.urls, "the request log recorded nothing"
    assert not requests.foreign, f"requests left the machine: {requests.foreign}"


def english_ui_strings() -> list[str]:
    """The catalogue's English phrases, as they would appear on the page (placeholders cut out), less those the
    Korean catalogue itself keeps in English (glossary terms, the paper's title and quotations, formulas)."""
    catalogue = _catalogue("ko")
    korean = "\n".join(catalogue.values())
    strings = []
    for msgid, msgstr in catalogue.items():
        if not msgid or msgstr == msgid:
            continue
        for part in re.split(r"\{[^}]*\}|\*\*|\*|`|\n", msgid):
            part = part.strip(" .,:;·()")
            if len(part) >= 12 and " " in part and re.search(r"[a-z]{3}", part) and part not in korean:
                strings.append(part)
    return sorted(set(strings), key=len, reverse=True)


def test_korean_pages_show_no_english_ui_text(app, browser):
    strings = english_ui_strings()
    assert len(strings) > 100, "the catalogue's English phrases were found"
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="ko-KR")
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(context)
    problems: list[str] = []
    try:
        for spec in PAGES:
            page = open_page(context, page_url(app, spec.url_path, lang="ko"))
            text = page.locator('[data-testid="stAppViewContainer"]').inner_text()
            if not re.search(r"[\uac00-\ud7a3]", text):
                problems.append(f"{spec.url_path}: no Korean on the page")
            english = [s for s in strings if s in text]
            if english:
                problems.append(f"{spec.url_path}: English UI text in Korean: {english[:5]}")
            if spec.url_path not in NO_FIGURE:
                wait_for_figure(page)
                for width, height in SIZES[:2]:
                    page.set_viewport_size({"width": width, "height": height})
                    wait_for_relayout(page)
                    box = first_figure_box(page)
                    if box is None or box["y"] + box["height"] > height + 1:
                        problems.append(f"{spec.url_path} ko {width}x{height}: first figure {box}")
            page.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert not requests.foreign, f"requests left the machine: {requests.foreign}"


def figure_text_sizes(page) -> list[float]:
    """The font size (px) of every text drawn in the page's first plotly figure."""
    return page.evaluate("""() => Array.from(document.querySelectorAll(
        '[data-testid="stMain"] [data-testid="stPlotlyChart"] .main-svg text, ' +
        '[data-testid="stMain"] [data-testid="stPlotlyChart"] .main-svg tspan'))
        .filter(e => e.textContent.trim() && e.getBoundingClientRect().width > 0 && e.checkVisibility())
        .map(e => parseFloat(getComputedStyle(e).fontSize))""")


def figure_title(page) -> str:
    return page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"] .gtitle').first.text_content()


# The figure is redrawn after a key press: between two drawings its title is absent, which is "not yet", not an
# error (a predicate that throws ends the wait at once).
HEAD_TITLE_JS = """(head) => { const t = document.querySelector(
    '[data-testid="stMain"] [data-testid="stPlotlyChart"] .gtitle');
    return t !== null && t.textContent.includes(head); }"""


def test_presenter_mode_large_text_and_the_remote_steps_heads(app, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = open_page(context, page_url(app, "translate", presenter="1", mode="head", head="1"))
        wait_for_figure(page)
        assert not page.locator('[data-testid="stSidebar"]').is_visible(), "the sidebar is out of the way"
        sizes = figure_text_sizes(page)
        assert sizes and min(sizes) >= 18, f"figure text sizes in presenter mode: {sorted(set(sizes))}"
        box = first_figure_box(page)
        assert box is not None and box["y"] + box["height"] <= 720, f"one figure per screen: {box}"
        assert "head 1" in figure_title(page)
        page.mouse.click(5, 400)  # the page, not a text box, has the focus
        page.keyboard.press("PageDown")
        page.wait_for_function(HEAD_TITLE_JS, arg="head 2", timeout=RENDER_TIMEOUT_MS)
        assert "head=2" in page.url, page.url
        page.keyboard.press("PageUp")
        page.wait_for_function(HEAD_TITLE_JS, arg="head 1", timeout=RENDER_TIMEOUT_MS)
        # Leaving presenter mode brings the sidebar and the normal text size back.
        page.get_by_role("button", name="Leave presenter mode").click()
        wait_idle(page)
        page.locator('[data-testid="stSidebar"]').wait_for(state="visible")
        assert "presenter=" not in page.url, page.url
        assert min(figure_text_sizes(page)) < 18, "normal figure text again"
    finally:
        context.close()


def test_presenter_remote_steps_the_tour(app, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = open_page(context, page_url(app, "tour", presenter="1"))
        heading = page.locator('[data-testid="stMain"] h5').first.inner_text()
        assert heading.startswith("1/"), heading
        page.mouse.click(5, 400)
        page.keyboard.press("PageDown")
        page.wait_for_function(
            """() => document.querySelector('[data-testid="stMain"] h5').textContent.startsWith('2/')""",
            timeout=RENDER_TIMEOUT_MS,
        )
    finally:
        context.close()
