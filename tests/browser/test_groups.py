"""The two browser groups that `pytest -n N` runs on two workers (tests/conftest.py): every file named in the
second group exists, the walks it splits by language exist, and both groups hold tests."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO_ROOT, SECOND_BROWSER_GROUP, SECOND_BROWSER_WALKS, browser_group


def test_the_second_group_names_existing_files_and_walks():
    for path in SECOND_BROWSER_GROUP:
        assert (REPO_ROOT / path).is_file(), f"{path} is in SECOND_BROWSER_GROUP but does not exist"
    for walk in SECOND_BROWSER_WALKS:
        path, name = walk.split("::")
        assert f"def {name}" in (REPO_ROOT / path).read_text(), f"{walk} names no test"


def test_each_browser_test_is_in_one_of_two_groups_and_no_other_test_is():
    browser_files = sorted(Path(__file__).parent.glob("test_*.py"))
    groups = {browser_group(f"tests/browser/{f.name}::test_x") for f in browser_files}
    assert groups == {"browser-1", "browser-2"}
    assert browser_group("tests/browser/test_sweep.py::test_every_page_fits_every_screen[dark-ko]") == "browser-2"
    assert browser_group("tests/browser/test_sweep.py::test_every_page_fits_every_screen[light-en]") == "browser-1"
    assert browser_group("tests/benchmarks/test_browser_pages_smoke.py::test_one") == "browser-1"
    assert browser_group("tests/engine/test_model.py::test_x") is None
