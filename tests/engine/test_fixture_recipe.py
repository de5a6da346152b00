"""The fixture checkpoints under tests/data/checkpoints and the recipe that wrote them (tests/fixture_models.py):
the recipe still trains a loadable model of the committed configuration, with the same files and vocabulary.
The weights themselves are not compared: they depend on the CPU that trains them, which is why they are
committed."""

from __future__ import annotations

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from tests.fixture_models import COMMITTED, KINDS, write_fixtures


@pytest.mark.parametrize("kind", KINDS)
def test_the_committed_fixture_is_a_small_checkpoint_of_its_kind(kind):
    folder = COMMITTED / f"{kind}-fixture"
    assert sum(f.stat().st_size for f in folder.iterdir()) < 1_000_000
    committed = load_checkpoint(folder)
    assert committed.metadata["fixture"] == kind and committed.training is not None


@pytest.mark.slow  # trains both fixture models
@pytest.mark.parametrize("kind", KINDS)
def test_the_recipe_still_writes_a_loadable_model_of_the_committed_config(kind, tmp_path):
    (written,) = write_fixtures(tmp_path, (kind,))
    committed_folder = COMMITTED / written.name
    assert sorted(f.name for f in written.iterdir()) == sorted(f.name for f in committed_folder.iterdir())
    fresh, committed = load_checkpoint(written), load_checkpoint(committed_folder)
    assert fresh.config == committed.config and fresh.metadata == committed.metadata
    assert fresh.tokenizer == committed.tokenizer
    assert fresh.training["step"] == committed.training["step"]
    (result,) = translate(fresh.model, fresh.tokenizer, ["a b c"])
    assert result.output_ids, "the fresh model translates"
