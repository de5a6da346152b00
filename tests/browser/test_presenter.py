"""Presenter mode in a real browser: figure text at 18 px or more, one figure per screen, the sidebar out of the
way, the page's controls in the presenter's bar (the sentence, the decoding, the view, and a way out), and a
presenter's remote (PageDown / PageUp) stepping through heads and tour stops."""

from __future__ import annotations

from tests.browser.helpers import (
    RENDER_TIMEOUT_MS,
    assert_no_exception,
    first_figure_box,
    query,
    wait_for_figure,
    wait_idle,
)
from tests.browser.test_sweep import PAGE_QUERY


def page_url(app, url_path: str, **extra: str) -> str:
    return f"{app.url}/{url_path}?" + query(model="words-fixture", **PAGE_QUERY.get(url_path, {}), **extra)


def open_page(context, url: str):
    page = context.new_page()
    page.goto(url, timeout=RENDER_TIMEOUT_MS)
    wait_idle(page)
    assert_no_exception(page)
    return page


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


# The source tokens the first figure shows (its x tick labels), joined: they change with the sentence.
FIGURE_KEYS_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stPlotlyChart"] .xtick text')).map(e => e.textContent).join(' ')"""
KEYS_CHANGED_JS = "(before) => { const now = (" + FIGURE_KEYS_JS + ")(); return now !== '' && now !== before; }"


def test_presenter_changes_sentence_and_view_on_the_page_and_leaves(app, browser):
    """On a 1024x768 projector in presenter mode the sidebar is hidden: the lecturer changes the sentence and the
    view in the presenter bar's "Controls" popover, then leaves presenter mode from the bar, all without the
    sidebar or the URL. (Presenter mode used to hide the sidebar with no way back but editing the URL.)"""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = open_page(context, page_url(app, "translate", presenter="1"))
        wait_for_figure(page)
        assert not page.locator('[data-testid="stSidebar"]').is_visible(), "the sidebar is out of the way"
        before = page.evaluate(FIGURE_KEYS_JS)
        opener = page.get_by_role("button", name="Controls")
        bar = opener.bounding_box()
        assert bar is not None and bar["y"] + bar["height"] <= 768, f"the controls are on the first screen: {bar}"
        opener.click()
        popover = page.locator('[data-testid="stPopoverBody"]')
        box = popover.locator(".st-key-sentence input")
        box.fill("the dog walks in the park .")
        box.press("Enter")
        page.wait_for_function(KEYS_CHANGED_JS, arg=before, timeout=RENDER_TIMEOUT_MS)
        assert "sentence=the+dog+walks" in page.url, page.url
        if not popover.is_visible():  # a rerun may close it
            opener.click()
        popover.get_by_text("Mean over heads").click()
        page.wait_for_function("() => location.search.includes('mode=mean')", timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        assert_no_exception(page)
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Leave presenter mode").click()
        wait_idle(page)
        page.locator(".st-key-present_on").wait_for(state="detached")
        assert "presenter=" not in page.url, page.url
        # At 1024 px the sidebar starts collapsed; its arrow opens it with the page's controls, as chosen.
        expand = page.locator('[data-testid="stExpandSidebarButton"]')
        if expand.is_visible():
            expand.click()
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.wait_for(state="visible")
        assert sidebar.locator(".st-key-sentence input").input_value() == "the dog walks in the park ."
    finally:
        context.close()
