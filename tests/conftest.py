"""Shared fixtures: the fixture checkpoints (committed under tests/data/checkpoints), the Multi30k location and
torch's thread count; and how the suite splits over pytest-xdist's workers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.apptest_helpers import checkpoints_at
from tests.fixture_models import COMMITTED
from tests.tiny_task import TinyTask
from tests.tiny_task import tiny_task as make_tiny_task

REPO_ROOT = Path(__file__).resolve().parents[1]
MULTI30K = REPO_ROOT.parent / "shared" / "data" / "multi30k"


# The browser tests' second group (see `_BrowserTestsInTwoGroups`), by node id prefix: whole files (ending in
# "::"), and single tests that split a file's long walks between the groups (the sweep's Korean walk, the tour's
# formula walk; the other walks stay in the first group, test_tour.py's two together, as they write one record of
# what they measured). Chosen so that the two groups take about the same time on a 2-core machine, and so that the
# servers a file starts of its own (`shipped`, `train-run`, `fresh`) start in one group only. A new browser file
# joins the first group.
SECOND_BROWSER_GROUP = (
    "tests/browser/test_pages.py::",
    "tests/browser/test_figure_text.py::",
    "tests/browser/test_presenter.py::",
    "tests/browser/test_rooms.py::",
    "tests/browser/test_no_probe_404.py::",
    "tests/browser/test_explain_switch.py::",
    "tests/browser/test_paper_rows.py::",
    "tests/browser/test_upload_cleanup.py::",
    "tests/benchmarks/test_room_browsers_smoke.py::",
    "tests/browser/test_sweep.py::test_every_page_fits_every_screen_in_its_language_and_stays_offline[dark-ko]",
    "tests/browser/test_url_injection.py::",
    "tests/browser/test_tour_walk.py::test_every_formula_fits_its_box",
)


# Tests outside tests/browser that start Chromium through Playwright's sync API themselves (the browser
# benchmarks' smoke tests). Playwright refuses a second sync session in a process, so each runs in a browser group:
# there it comes before the group's shared `browser` (tests/benchmarks is collected before tests/browser, and a
# group runs in collection order), never on a worker whose shared browser is already open.
OWN_CHROMIUM = ("tests/benchmarks/test_browser_pages_smoke.py", "tests/benchmarks/test_classroom_smoke.py")


def browser_group(nodeid: str) -> str | None:
    """The group ("browser-1" or "browser-2") of a test that drives Chromium (tests/browser, the browser
    benchmarks' smoke tests), None for any other."""
    path = nodeid.split("::")[0]
    if "browser" not in path and path not in OWN_CHROMIUM:
        return None
    return "browser-2" if nodeid.startswith(SECOND_BROWSER_GROUP) else "browser-1"


class _BrowserTestsInTwoGroups:
    """Under `pytest -n N` (the README's test command) the tests that drive Chromium run in two groups, each on one
    worker, one test after another: each drives a Streamlit server and Chromium, which take a core in bursts, so
    at most two run at once on a 2-core machine, beside nothing else until a group is done. One group alone was
    the suite's critical path (its worker still drove Chromium long after the other had run every other test).
    Every other test is spread over the workers. Each worker starts the servers its group uses. (xdist's own
    `--dist loadgroup` did not keep a group on one worker with this pytest.)"""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        from xdist.scheduler import LoadScopeScheduling

        class BrowserScope(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                # A scope per browser group, the largest first (xdist orders scopes by their number of tests, so
                # both groups start at once); every other test is a scope of its own, spread as with plain `-n`.
                return browser_group(nodeid) or nodeid

        return BrowserScope(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` starts a worker more than the machine has cores: two of them drive the browser groups, whose
    tests spend part of their time waiting on a server or Chromium, and the third runs the other tests
    meanwhile. On a 2-core AMD EPYC, fresh clones, pytest's own time: 17:10 with two workers; 15:33, 17:47 and
    15:30 with three (the machine's noise is about as large as the difference)."""
    return (os.cpu_count() or 1) + 1


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_BrowserTestsInTwoGroups(), "browser-tests-in-two-groups")


@pytest.fixture(scope="session")
def checkpoint_root(tmp_path_factory) -> Path:
    """A checkpoints/ folder holding `reverse-fixture` and `words-fixture`; the app is pointed at it.

    A copy of the committed fixtures (tests/data/checkpoints, written by tests/fixture_models.py), so a test
    that writes into it cannot change them.
    """
    root = tmp_path_factory.mktemp("checkpoints")
    for name in ("reverse-fixture", "words-fixture"):
        shutil.copytree(COMMITTED / name, root / name)
    with checkpoints_at(root):
        yield root


@pytest.fixture(scope="session")
def reverse_checkpoint(checkpoint_root) -> Path:
    return checkpoint_root / "reverse-fixture"


@pytest.fixture(scope="session")
def words_checkpoint(checkpoint_root) -> Path:
    return checkpoint_root / "words-fixture"


@pytest.fixture(scope="session")
def tiny_task() -> TinyTask:
    """The tiny reverse task of tests/tiny_task.py: (train, val, tokenizer, config)."""
    return make_tiny_task()


@pytest.fixture
def reversal_pairs(tmp_path) -> str:
    """`--data` for `explorer train`: 24 three-letter lines and their reversals, as 'src.txt,tgt.txt' in tmp_path
    (the reverse fixture's own alphabet, so `--init-from` a reverse checkpoint reads every piece)."""
    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text("".join(f"{a} {b} {a}\n" for a in "abcdef" for b in "ghij"))
    tgt.write_text("".join(f"{a} {b} {a}\n"[::-1].strip() + "\n" for a in "abcdef" for b in "ghij"))
    return f"{src},{tgt}"


@pytest.fixture(scope="session")
def multi30k_root() -> Path:
    if not (MULTI30K / "test2016.en").is_file():
        pytest.skip(f"Multi30k not found at {MULTI30K} (it lives in ../shared/data/multi30k beside the repo)")
    return MULTI30K


@pytest.fixture
def torch_threads_restored():
    """The thread count as it was before the test: benchmarks called in-process set their own."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models on a shared 2-core machine run far faster with one intra-op thread."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
