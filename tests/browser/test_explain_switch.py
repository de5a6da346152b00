"""The raw / value-weighted switch in a browser (fixture app, 1280x720, one page load): Translate opened with
?weighting=value_weighted shows the switch's two options, a heatmap titled value-weighted, and nothing wider than
the window; one click back to the raw weights retitles it."""

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
        options = page.locator('.st-key-weighting button[data-variant="segmented_control"]')
        assert [text.strip() for text in options.all_inner_texts()] == ["Raw weights", "Value-weighted"]
        assert "value-weighted" in _title(page)
        assert not overflowing(page)
        options.filter(has_text="Raw weights").click()
        wait_idle(page)
        wait_for_figure(page)
        assert "value-weighted" not in _title(page)
