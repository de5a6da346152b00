"""The room benchmark's real phones (benchmarks/room_browsers.py) at their smallest: one app server on SQLite, one
headless phone at 390×844 beside two simulated students. Not timed: it checks that every answer is recorded once,
that the phone's tap reaches the presenter's count and the reveal reaches the phone, and that the rows are made."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import room_browsers
from benchmarks.common import Result
from tests.browser.helpers import chromium_path

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_one_phone_and_two_simulated_students_are_counted_and_follow_the_reveal(tmp_path: Path) -> None:
    if chromium_path() is None:
        pytest.skip("Chromium not found: install it (apt-get install chromium)")
    pytest.importorskip("playwright.async_api", reason="Playwright for Python is not installed")
    run = room_browsers.measure(1, f"sqlite:///{tmp_path / 'rooms.sqlite'}", 1, 2, 1.0, tmp_path / "server")
    assert run.loaded == 1 and run.recorded == 3 and run.flood_votes == 1
    assert len(run.tap_to_count_s) == 1 and run.tap_to_count_s[0] >= 0
    assert len(run.reveal_to_phone_s) == 1 and run.shares[0].endswith("of the class was right.")
    assert len(run.cpu_s) == len(run.peak_mib) == 1 and run.peak_mib[0] > 0
    result = Result("room", "A room")
    room_browsers.rows(result, run)
    assert result.rows[0].value == "3/3 (1/1 phones loaded)" and result.rows[0].met
