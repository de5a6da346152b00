"""Shared fixtures: the fixture checkpoints (committed under tests/data/checkpoints), the Multi30k location and
torch's thread count; and how the suite splits over pytest-xdist's workers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.fixture_models import COMMITTED
from tests.tiny_task import TinyTask
from tests.tiny_task import tiny_task as make_tiny_task

REPO_ROOT = Path(__file__).resolve().parents[1]
MULTI30K = REPO_ROOT.parent / "shared" / "data" / "multi30k"


class _BrowserTestsTogether:
    """Under `pytest -n N` (the README's test command) the tests that drive Chromium run on one worker, one after
    another as without xdist: each drives a Streamlit server and Chromium, which take both cores of a small
    machine in bursts, and their waits are sized for one at a time. Every other test is spread over the
    workers, beside them. (xdist's own `--dist loadgroup` did not keep a group on one worker with this pytest.)"""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        from xdist.scheduler import LoadScopeScheduling

        class BrowserScope(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                # One scope for every browser test (tests/browser, the browser benchmark's smoke test); every
                # other test is a scope of its own, so they spread as with plain `-n`.
                return "browser" if "browser" in nodeid.split("::")[0] else nodeid

        return BrowserScope(config, log)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_BrowserTestsTogether(), "browser-tests-together")


@pytest.fixture(scope="session")
def checkpoint_root(tmp_path_factory) -> Path:
    """A checkpoints/ folder holding `reverse-fixture` and `words-fixture`; the app is pointed at it.

    A copy of the committed fixtures (tests/data/checkpoints, written by tests/fixture_models.py), so a test
    that writes into it cannot change them.
    """
    root = tmp_path_factory.mktemp("checkpoints")
    for name in ("reverse-fixture", "words-fixture"):
        shutil.copytree(COMMITTED / name, root / name)
    previous = os.environ.get("EXPLORER_CHECKPOINTS")
    os.environ["EXPLORER_CHECKPOINTS"] = str(root)
    yield root
    if previous is None:
        os.environ.pop("EXPLORER_CHECKPOINTS", None)
    else:
        os.environ["EXPLORER_CHECKPOINTS"] = previous


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
