"""The browser benchmark (benchmarks/browser_pages.py) at its smallest: one server, the Translate page once warm,
one head switch. Not a timed test: it checks that every timing is a positive number and that the detector saw the
figure it waited for (a detector that never sees a figure fails here, after `timeout_s`, instead of timing a
spinner)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks.browser_pages import Settings, markdown_table, measure
from benchmarks.common import SHIPPED_CHECKPOINT
from tests.browser.helpers import chromium_path

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_one_page_and_one_click_are_timed_to_their_drawn_figure(tmp_path: Path) -> None:
    if chromium_path() is None:
        pytest.skip("Chromium not found: install it (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    if not (SHIPPED_CHECKPOINT / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint is absent")
    settings = Settings(
        runs=1,
        languages=("en",),
        pages=("translate",),
        interactions=("Translate: head",),
        log_dir=tmp_path,
        timeout_s=90,  # the first figure waits for the cold server (torch, the model) too
    )
    rows = measure(settings, log=lambda line: None)

    assert [row.what for row in rows] == [
        "`python app.py` → translate's figure",
        "page translate → figure",
        "Translate: head",
    ]
    for row in rows:
        timings = [row.first, *row.seconds]
        assert all(math.isfinite(s) and s > 0 for s in timings), (row.what, timings)
        assert row.cpu and all(c >= 0 for c in row.cpu), (row.what, row.cpu)
        assert row.rss_mib > 50, (row.what, row.rss_mib)
    # The page's figure is the one-head heatmap, and the head switch redrew that same figure.
    assert [row.figure for row in rows] == ["translate_head"] * 3
    table = markdown_table(rows)
    assert table.count("\n") == 2 + len(rows) - 1 and "| Translate: head | en |" in table
