"""Table 3's rows on a projector (the shipped Multi30k model, 1280x720, English): stop 9 with row (E) picked
shows the stored pair beside the paper's row, draws the accuracy by length, and nothing on the stop is wider
than the window or cut. A full-page screenshot goes to test-artifacts/screenshots/paper_rows_e.png."""

from __future__ import annotations

import pytest

from tests.browser.helpers import cut_text, full_screenshot, opened, overflowing, query
from tests.browser.test_paper_live import app  # noqa: F401  (the shipped model's server, a fixture)


@pytest.mark.slow
def test_row_e_on_a_projector(app, browser):  # noqa: F811 (pytest passes the imported fixture)
    # ?tour_table3_row=E: the link opens stop 9 on row (E), as a lecturer's would.
    url = f"{app.url}/tour?" + query(model="multi30k-en-de", stop="9", tour_table3_row="E")
    with opened(browser, url, (1280, 720)) as page:
        figure = page.locator('[data-testid="stMain"] .st-key-tour_row_e_lengths_stored')
        figure.wait_for(timeout=120_000)
        figure.scroll_into_view_if_needed()
        page.wait_for_timeout(500)  # plotly sizes itself after it is attached
        main = page.locator('[data-testid="stMain"]')
        assert figure.bounding_box() is not None, "the accuracy-by-length figure is drawn"
        text = main.inner_text()
        assert "Row (E): learned positions against sinusoids" in text
        assert "python -m explorer.tour.table3_rows --row E" in text, "the command that makes the stored result"
        assert not overflowing(page), overflowing(page)
        assert not cut_text(page), cut_text(page)
        full_screenshot(page, "paper_rows_e", width=1280)
