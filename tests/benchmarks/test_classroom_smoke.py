"""The classroom benchmark (benchmarks/classroom.py) at its smallest: one lecturer's click idle and with a class of
three (one in Chromium, two over Streamlit's websocket protocol). Not a timed test: it checks that the class
really joined and worked (reruns answered by the server, a browser click made) and that every lecturer's timing
is a positive number, so the benchmark cannot report a ratio over a class that never came in."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks.classroom import ClassSettings, markdown_table, measure
from benchmarks.common import SHIPPED_CHECKPOINT
from tests.browser.helpers import chromium_path

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_a_small_class_joins_works_and_the_lecturer_is_timed(tmp_path: Path) -> None:
    if chromium_path() is None:
        pytest.skip("Chromium not found: install it (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    if not (SHIPPED_CHECKPOINT / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint is absent")
    settings = ClassSettings(
        students=3, browsers=1, think_s=1.0, runs=1, warm_s=4.0, clicks=("Translate: head",), log_dir=tmp_path
    )
    measured = measure(settings, log_line=lambda line: None)

    assert measured.log.joined == 3, measured.log.failures
    assert measured.log.reruns and all(s > 0 for s in measured.log.reruns), "the websocket students were answered"
    (click,) = measured.clicks
    assert click.name == "Translate: head" and len(click.idle) == 1 and len(click.loaded) == 1
    assert all(math.isfinite(s) and s > 0 for s in click.idle + click.loaded)
    assert measured.rss_after > 50 and measured.cores_busy > 0
    assert "| Translate: head |" in markdown_table(measured, settings)
