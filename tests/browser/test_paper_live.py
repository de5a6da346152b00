"""Word order on a projector (the shipped Multi30k model, 1024x768, Korean): the tour's stop 5 shows the Korean
example as text, draws the four attention maps of the English pair, states the permutation check, and nothing
on the stop is wider than the window or cut. A full-page screenshot goes to
test-artifacts/screenshots/paper_live_word_order.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.helpers import cut_text, full_screenshot, opened, overflowing, query, wait_for_figure

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints"


@pytest.fixture(scope="module")
def app(servers):
    if not (SHIPPED / "multi30k-en-de" / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    return servers.get("shipped", checkpoint_root=SHIPPED)


@pytest.mark.slow
def test_word_order_stop_on_a_projector(app, browser):
    url = f"{app.url}/tour?" + query(model="multi30k-en-de", stop="5", lang="ko")
    with opened(browser, url, (1024, 768)) as page:
        wait_for_figure(page)
        main = page.locator('[data-testid="stMain"]')
        figure = main.locator('.st-key-tour_wo_figure [data-testid="stPlotlyChart"], .st-key-tour_wo_figure')
        figure.first.scroll_into_view_if_needed()
        assert figure.first.bounding_box() is not None, "the word-order figure is drawn"
        text = main.inner_text()
        assert "나는 밥을 먹는다" in text and "밥을 나는 먹는다" in text, "the Korean example is shown as text"
        assert "위치 인코딩 없이는" in text, "the permutation check is stated"
        # The translations' table is a canvas (no text to read); the engine test checks its contents.
        assert main.locator('[data-testid="stDataFrame"]').count() >= 1
        assert not overflowing(page), overflowing(page)
        assert not cut_text(page), cut_text(page)
        full_screenshot(page, "paper_live_word_order", width=1024)
