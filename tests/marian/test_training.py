"""Continuing an imported model on a user's corpus: the target side is read with the target tokenizer (its own
SentencePiece model and vocabulary), and a launched run starts from the imported weights and saves a checkpoint
with the imported tokenizer."""

from __future__ import annotations

import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.data.corpus import ParallelCorpus
from explorer.marian.importer import import_marian
from explorer.training.batches import encode_pairs
from explorer.training.launcher import RunManager
from explorer.training.trainer import Trainer
from tests.marian.models import build_marian, marian_tokenizer, sentences
from tests.tiny_task import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def separate(tmp_path_factory):
    """An imported model with separate source and target vocabularies, and its Hugging Face folder."""
    built = build_marian(tmp_path_factory.mktemp("hf") / "hf", shared=False, seed=11)
    out = import_marian(built.path, tmp_path_factory.mktemp("ck") / "separate")
    return built, out


def corpus(count: int, seed: int) -> ParallelCorpus:
    source, target = sentences(count, seed), sentences(count, seed + 1)
    return ParallelCorpus("user", tuple(source), tuple(target))


def test_the_target_side_is_encoded_with_the_target_tokenizer(separate):
    built, out = separate
    ck = load_checkpoint(out)
    pairs = corpus(20, 1)
    source_ids, target_ids = encode_pairs(ck.tokenizer, pairs, ck.config.max_len)
    reference = marian_tokenizer(built.path)
    for text, ids in zip(pairs.target, target_ids, strict=True):
        assert ids + [ck.config.eos_id] == reference(text_target=text)["input_ids"]
    for text, ids in zip(pairs.source, source_ids, strict=True):
        assert ids + [ck.config.eos_id] == reference(text)["input_ids"]
    assert target_ids != [ck.tokenizer.encode(text) for text in pairs.target], "the two vocabularies differ"


def test_a_trainer_continues_the_imported_weights(separate):
    _, out = separate
    ck = load_checkpoint(out)
    trainer = Trainer(ck.config, tiny_train_config(steps=2), ck.tokenizer, corpus(30, 2), None, None)
    trainer.load_initial_weights(ck.model)
    before = {name: t.clone() for name, t in trainer.model.state_dict().items()}
    assert all(torch.equal(before[n], t) for n, t in ck.model.state_dict().items())
    result = trainer.run()
    assert result.step == 2
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[n], after[n]) for n in before), "two steps changed the weights"


@pytest.mark.slow
def test_a_launched_run_starts_from_the_imported_model_and_saves_its_tokenizer(separate, tmp_path):
    _, out = separate
    ck = load_checkpoint(out)
    manager = RunManager(tmp_path / "runs")
    name = manager.start_new(
        "continued",
        model_config=ck.config,
        train_config=tiny_train_config(steps=3, max_len=ck.config.max_len),
        tokenizer=ck.tokenizer,
        train=corpus(30, 3),
        val=None,
        save_in=tmp_path / "saved",
        init_from=out,
    )
    snap = manager.wait(name, timeout=180)
    assert snap.status == "finished", (snap.status, snap.error, snap.log)
    saved = load_checkpoint(tmp_path / "saved" / name)
    assert saved.tokenizer == ck.tokenizer and saved.config == ck.config
    # Three small steps from the imported weights stay near them; from a fresh initialisation they would not.
    distance = max((saved.model.state_dict()[n] - t).abs().max().item() for n, t in ck.model.state_dict().items())
    assert 0 < distance < 0.05
