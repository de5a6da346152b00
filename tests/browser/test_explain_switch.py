"""The raw / value-weighted switch in a browser (fixture app, 1280x720, one page load): Translate opened with
?weighting=value_weighted shows the switch in the sidebar on the first screen with that option chosen, a heatmap
titled value-weighted, and nothing wider than the window; one click back to the raw weights retitles it."""

from __future__ import annotations

import pytest

from tests.browser.helpers import opened, overflowing, query, wait_for_figure, wait_idle

SENTENCE = "a small child sees the red dog ."

pytestmark = pytest.mark.slow


def _title(page) -> str:
    return page.locator('[data-testid="stMain"] .js-plotly-plot .gtitle').first.text_content() or ""


def test_switch_on_the_first_screen_and_it_changes_the_heatmap(app, browser):
    url = f"{app.url}/translate?" + query(model="words-fixture", sentence=SENTENCE, weighting="value_weighted")
    with opened(browser, url, size=(1280, 720)) as page:
        wait_for_figure(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        switch = sidebar.get_by_role("button", name="Value-weighted", exact=True)
        box = switch.bounding_box()
        assert box and box["y"] + box["height"] <= 720, "the switch is on the first screen of the sidebar"
        assert "value-weighted" in _title(page)
        assert not overflowing(page)
        sidebar.get_by_role("button", name="Raw weights", exact=True).click()
        wait_idle(page)
        wait_for_figure(page)
        assert "value-weighted" not in _title(page)
