"""A tour walk leaves the server log clean: no warning with a stack trace at any change of stop (Next, Previous,
a page number, the presenter's PageDown), on a server of its own so its log holds this walk only."""

from __future__ import annotations

from tests.browser.helpers import RENDER_TIMEOUT_MS, assert_no_exception, query, wait_idle

SENTENCE = "a small child sees the red dog ."


def test_a_tour_walk_logs_no_warning(browser, servers, checkpoint_root):
    app = servers.get("tour-log", checkpoint_root=checkpoint_root)
    log = servers.logs / "tour-log.log"
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{app.url}/tour?" + query(model="words-fixture", tour_sentence=SENTENCE, stop="1", presenter="1"))
        wait_idle(page)
        for move in (
            lambda: page.locator(".st-key-tour_next button").click(),
            lambda: page.locator(".st-key-tour_next button").click(),
            lambda: page.locator(".st-key-tour_prev button").click(),
            lambda: page.locator('[data-testid="stMain"] [aria-label="Page 4"]').click(),
            lambda: page.keyboard.press("PageDown"),
        ):
            move()
            wait_idle(page)
            assert_no_exception(page)
    finally:
        context.close()
    text = log.read_text(errors="replace")
    # Streamlit's log lines carry no level: a warning shows by its stack ("Stack (most recent call last)").
    for sign in ("Traceback", " WARNING ", "Stack (most recent call last)"):
        assert sign not in text, text[-4000:]
