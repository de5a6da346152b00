"""Shared fixtures: fixture checkpoints (trained once per test session) and the Multi30k location."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from tests.fixture_models import train_fixture

REPO_ROOT = Path(__file__).resolve().parents[1]
MULTI30K = REPO_ROOT.parent / "shared" / "data" / "multi30k"


@pytest.fixture(scope="session")
def checkpoint_root(tmp_path_factory) -> Path:
    """A checkpoints/ folder holding `reverse-fixture` and `words-fixture`; the app is pointed at it."""
    root = tmp_path_factory.mktemp("checkpoints")
    torch.manual_seed(0)
    train_fixture("reverse", root)
    train_fixture("words", root)
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
def multi30k_root() -> Path:
    if not (MULTI30K / "test2016.en").is_file():
        pytest.skip(f"Multi30k not found at {MULTI30K} (it lives in ../shared/data/multi30k beside the repo)")
    return MULTI30K
