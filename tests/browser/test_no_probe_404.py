"""A page opened at its own address (/translate) finds the server without a failed request: Streamlit's browser
code used to probe /translate/_stcore/health and /translate/_stcore/host-config first, two 404s on every page
load (main_script/server.py says how the pages now tell it where the server is)."""

from __future__ import annotations

from tests.browser.helpers import App, assert_no_exception, query, wait_idle


def test_opening_a_page_makes_no_failed_request(app: App, browser):
    context = browser.new_context()
    try:
        page = context.new_page()
        failed: list[str] = []
        page.on(
            "response",
            lambda response: failed.append(f"{response.status} {response.url}") if response.status >= 400 else None,
        )
        for path in ("/translate?" + query(model="words-fixture"), "/heads", "/"):
            page.goto(app.url + path)
            wait_idle(page)
            assert_no_exception(page)
        assert page.locator('[data-testid="stSidebar"]').count() == 1  # the frame is there: the app connected
        assert failed == []
    finally:
        context.close()
