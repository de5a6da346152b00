"""The two browser groups that `pytest -n N` runs on two workers (tests/conftest.py): every test the second group
names exists, both groups hold tests, and no other test is in either."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import OWN_CHROMIUM, REPO_ROOT, SECOND_BROWSER_GROUP, browser_group


def test_the_second_group_names_existing_files_and_tests():
    for prefix in SECOND_BROWSER_GROUP:
        path, name = prefix.split("::")
        assert (REPO_ROOT / path).is_file(), f"{path} is in SECOND_BROWSER_GROUP but does not exist"
        if name:
            function = name.split("[")[0]
            assert f"def {function}(" in (REPO_ROOT / path).read_text(), f"{prefix} names no test"


def test_each_browser_test_is_in_one_of_two_groups_and_no_other_test_is():
    browser_files = sorted(Path(__file__).parent.glob("test_*.py"))
    groups = {browser_group(f"tests/browser/{f.name}::test_x") for f in browser_files}
    assert groups == {"browser-1", "browser-2"}
    sweep = "tests/browser/test_sweep.py::test_every_page_fits_every_screen_in_its_language_and_stays_offline"
    assert browser_group(f"{sweep}[dark-ko]") == "browser-2"
    assert browser_group(f"{sweep}[light-en]") == "browser-1"
    assert browser_group("tests/browser/test_pages_more.py::test_x") == "browser-1"
    assert browser_group("tests/benchmarks/test_browser_pages_smoke.py::test_one") == "browser-1"
    for path in OWN_CHROMIUM:  # each starts Playwright itself: never beside a worker's shared browser
        assert (REPO_ROOT / path).is_file(), path
        assert browser_group(f"{path}::test_x") is not None
    assert browser_group("tests/benchmarks/test_room_browsers_smoke.py::test_x") == "browser-2"
    assert browser_group("tests/engine/test_model.py::test_x") is None
