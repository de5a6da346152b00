"""Shared fixtures: fixture checkpoints (trained once per test session) and the Multi30k location."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

from tests.browser.helpers import CHROMIUM_ARGS, chromium_path
from tests.fixture_models import train_fixture

REPO_ROOT = Path(__file__).resolve().parents[1]
MULTI30K = REPO_ROOT.parent / "shared" / "data" / "multi30k"


# Everything that shapes the fixture checkpoints: when none of it changed, a cached copy is reused, which
# keeps repeated test runs on a 2-core machine from retraining the same models.
FIXTURE_SOURCES = [
    "tests/fixture_models.py",
    "explorer/config.py",
    "explorer/checkpoint.py",
    "explorer/tokenizer.py",
    "explorer/model",
    "explorer/training/trainer.py",
    "explorer/training/loss.py",
    "explorer/training/schedule.py",
    "explorer/training/train_config.py",
    "explorer/training/batches.py",
    "explorer/data/synthetic.py",
    "explorer/data/batching.py",
]


def _fixture_key() -> str:
    digest = hashlib.sha256(torch.__version__.encode() + b"|one-thread")
    for name in FIXTURE_SOURCES:
        path = REPO_ROOT / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def _cached_fixtures() -> Path:
    cache = Path(os.environ.get("EXPLORER_FIXTURE_CACHE", Path(tempfile.gettempdir()) / "explorer-fixtures"))
    target = cache / _fixture_key()
    if not target.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".building-", dir=cache))
        # One thread: the trained weights depend on the thread count (reduction order), and the fixtures must
        # be the same models whichever test happens to build them first.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            torch.manual_seed(0)
            train_fixture("reverse", staging)
            train_fixture("words", staging)
        finally:
            torch.set_num_threads(threads)
        try:
            staging.rename(target)
        except OSError:  # another test session finished first; its copy is identical
            shutil.rmtree(staging, ignore_errors=True)
    return target


@pytest.fixture(scope="session")
def checkpoint_root(tmp_path_factory) -> Path:
    """A checkpoints/ folder holding `reverse-fixture` and `words-fixture`; the app is pointed at it.

    Tests get their own copy, so one that writes into it cannot spoil the cache.
    """
    root = tmp_path_factory.mktemp("checkpoints")
    cached = _cached_fixtures()
    for name in ("reverse-fixture", "words-fixture"):
        shutil.copytree(cached / name, root / name)
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


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for one browser-test module (Debian's `chromium`, driven by Playwright); the module's
    tests are skipped with the reason when either is missing."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium not found: install it (apt-get install chromium) to run browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()
