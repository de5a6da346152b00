"""Clicks that rerun a fragment, in a real browser: on the Heads page a head switched off (a fragment rerun)
blanks its panel and writes ?heads= to the address bar, and a reload of that address shows the same head off."""

from __future__ import annotations

import pytest

from tests.browser.helpers import assert_no_exception, opened, query, wait_for_figure, wait_idle

# The remaining heads' panel titles, as plotly holds them ("1 · off" for a switched-off head).
_TITLES_JS = """() => (document.querySelector('.st-key-heads_remaining .js-plotly-plot')?.layout?.annotations || [])
    .map(a => a.text)"""


def off_titles(page) -> list[str]:
    return [title for title in page.evaluate(_TITLES_JS) if "off" in title]


@pytest.mark.slow
def test_a_head_switched_off_in_the_fragment_is_kept_in_the_address(app, browser):
    url = f"{app.url}/heads?" + query(model="reverse-fixture", lang="en", h_sentence="a b c d e f g")
    with opened(browser, url) as page:
        wait_for_figure(page)
        assert not off_titles(page)
        page.locator(".st-key-hm_cross_1_0 label").first.click()
        page.wait_for_function("() => location.search.includes('heads=cross.1.0')")
        page.wait_for_function(f"() => ({_TITLES_JS})().some(t => t.includes('off'))")
        assert off_titles(page) == ["1 · off"]
        page.reload()
        wait_idle(page)
        wait_for_figure(page)
        assert_no_exception(page)
        assert "heads=cross.1.0" in page.url
        assert not page.locator(".st-key-hm_cross_1_0 input").is_checked()
        assert off_titles(page) == ["1 · off"]
