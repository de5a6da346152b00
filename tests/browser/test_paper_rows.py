"""Table 3's rows on a projector (the shipped Multi30k model, 1280x720, English): stop 9 with row (E) picked
shows the stored pair beside the paper's row, draws the accuracy by length, and nothing on the stop is wider
than the window or cut. A full-page screenshot goes to test-artifacts/screenshots/paper_rows_e.png."""

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
def test_row_e_on_a_projector(app, browser):
    url = f"{app.url}/tour?" + query(model="multi30k-en-de", stop="9", tour_table3_row="E")
    with opened(browser, url, (1280, 720)) as page:
        wait_for_figure(page)
        main = page.locator('[data-testid="stMain"]')
        figure = main.locator(".st-key-tour_row_e_lengths_stored")
        figure.wait_for(timeout=60_000)
        figure.scroll_into_view_if_needed()
        assert figure.bounding_box() is not None, "the accuracy-by-length figure is drawn"
        text = main.inner_text()
        assert "Row (E): learned positions against sinusoids" in text
        assert "python -m explorer.tour.table3_rows --row E" in text, "the command that makes the stored result"
        assert not overflowing(page), overflowing(page)
        assert not cut_text(page), cut_text(page)
        full_screenshot(page, "paper_rows_e", width=1280)
