"""Head importance (Michel et al., 2019): ablation BLEU per head, gradient importance, pruning curves,
reproducible with a seed and cached by checkpoint content."""

from __future__ import annotations

import copy
import json
import shutil
import time

import pytest
import torch

from explorer.analysis.importance import (
    ImportanceRun,
    ImportanceSettings,
    ImportanceTable,
    bleu_with,
    checkpoint_hash,
    compute_importance,
    find_table,
    gradient_importance,
    sample_pairs,
)
from explorer.checkpoint import load_checkpoint
from explorer.model import HeadMask
from explorer.model.head_mask import all_head_names
from tests.fixture_models import words_corpus

SETTINGS = ImportanceSettings(sentences=10, seed=3)


@pytest.fixture(scope="module")
def words(words_checkpoint, one_torch_thread):
    return load_checkpoint(words_checkpoint)


@pytest.fixture(scope="module")
def table(words) -> ImportanceTable:
    corpus = words_corpus(40, 7)
    return compute_importance(words.model, words.tokenizer, corpus.source, corpus.target, settings=SETTINGS)


def test_sample_is_fixed_by_the_seed():
    sources = [f"s{i}" for i in range(50)]
    refs = [f"r{i}" for i in range(50)]
    assert sample_pairs(sources, refs, 10, 1) == sample_pairs(sources, refs, 10, 1)
    assert sample_pairs(sources, refs, 10, 1)[0] != sample_pairs(sources, refs, 10, 2)[0]
    picked, their_refs = sample_pairs(sources, refs, 10, 1)
    assert [s[1:] for s in picked] == [r[1:] for r in their_refs], "pairs stay aligned"
    assert sample_pairs(sources, refs, 500, 1)[0] == sources


def test_table_covers_every_head_and_is_reproducible(words, table):
    config = words.model.config
    assert [h.name for h in table.heads] == all_head_names(config)
    for h in table.heads:
        assert h.bleu_drop == pytest.approx(table.baseline_bleu - h.bleu)
        assert h.gradient >= 0
    again = compute_importance(
        words.model, words.tokenizer, words_corpus(40, 7).source, words_corpus(40, 7).target, settings=SETTINGS
    )
    assert again.to_dict() == table.to_dict()
    assert table.to_dict() == ImportanceTable.from_dict(json.loads(table.to_json())).to_dict()
    assert table.to_csv().splitlines()[0].startswith("head,bleu_without,bleu_drop,gradient_importance")
    assert len(table.to_csv().splitlines()) == 1 + len(table.heads)


def test_the_ablation_column_is_the_bleu_of_that_mask(words, table):
    sources, refs = sample_pairs(words_corpus(40, 7).source, words_corpus(40, 7).target, 10, 3)
    name = table.ranked()[0].name
    bleu, _ = bleu_with(words.model, words.tokenizer, sources, refs, HeadMask.from_names([name], words.model.config))
    assert bleu == pytest.approx(table.score(name).bleu)
    # Someone must matter: a 2-head model that lost a head gets worse somewhere.
    assert table.ranked()[0].bleu_drop > 0


def test_pruning_curves_remove_heads_cumulatively(words, table):
    config = words.model.config
    for family, curve in table.pruning.items():
        per_family = len(all_head_names(config, [family]))
        assert [s.removed for s in curve] == list(range(per_family + 1))
        assert curve[0].bleu == table.baseline_bleu
        # The first removal is a single head, so it equals that head's ablation BLEU.
        assert curve[1].bleu == pytest.approx(table.score(curve[1].head).bleu)
        # Least important first, by Michel et al.'s layer-normalised gradient score.
        scores = [table.score(s.head).gradient_normalised for s in curve[1:]]
        assert scores == sorted(scores)
        assert sorted(s.head for s in curve[1:]) == sorted(all_head_names(config, [family]))


def test_gradient_importance_matches_a_finite_difference(words):
    # In float64: a float32 loss moves by ~1e-5 between gate = 1 ± 1e-3, which is noise of ~0.01 in the slope.
    model, tokenizer = copy.deepcopy(words.model).double(), words.tokenizer
    config = model.config
    source, reference = ["a big dog walks in the park ."], ["ein großer Hund läuft im der Park ."]
    grads = gradient_importance(model, tokenizer, source, reference)
    src = torch.tensor([tokenizer.encode(source[0]) + [config.eos_id]])
    tgt = tokenizer.encode(reference[0]) + [config.eos_id]
    tgt_in = torch.tensor([[config.bos_id] + tgt[:-1]])

    def loss(gate: float) -> float:
        gates = torch.ones(config.n_decoder_layers, config.n_heads)
        gates[1, 0] = gate
        logits = model(src, tgt_in, head_mask=HeadMask(cross=gates)).logits[0]
        return float(torch.nn.functional.cross_entropy(logits, torch.tensor(tgt), reduction="sum"))

    eps = 1e-3
    with torch.no_grad():
        slope = (loss(1 + eps) - loss(1 - eps)) / (2 * eps)
    assert grads["cross.1.0"] == pytest.approx(abs(slope), rel=2e-2, abs=1e-3)


def test_background_run_writes_a_cache_keyed_by_checkpoint_content(
    reverse_checkpoint, tmp_path, monkeypatch, one_torch_thread
):
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path / "cache"))
    checkpoint = tmp_path / "reverse"
    shutil.copytree(reverse_checkpoint, checkpoint)
    config = json.loads((checkpoint / "config.json").read_text())
    config["metadata"]["data"] = "reverse"
    (checkpoint / "config.json").write_text(json.dumps(config))
    settings = ImportanceSettings(sentences=6, seed=0)
    assert find_table(checkpoint, settings) is None
    run = ImportanceRun(checkpoint, settings).start()
    deadline = time.monotonic() + 120
    while run.running and time.monotonic() < deadline:
        time.sleep(0.2)
    assert run.error is None and run.table is not None
    done, total, _ = run.progress
    assert done == total
    cached = find_table(checkpoint, settings)
    assert cached is not None and cached.to_dict() == run.table.to_dict()
    assert cached.checkpoint_hash == checkpoint_hash(checkpoint)
    assert ImportanceRun(checkpoint, settings).table is not None, "a second run finds the cache, computes nothing"
    # Different weights, different key: the old table is not served for them.
    (checkpoint / "model.safetensors").write_bytes((checkpoint / "model.safetensors").read_bytes() + b" ")
    assert find_table(checkpoint, settings) is None


def test_a_shipped_table_is_served_only_for_the_files_it_was_made_from(reverse_checkpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path / "cache"))
    checkpoint = tmp_path / "ck"
    shutil.copytree(reverse_checkpoint, checkpoint)
    table = ImportanceTable(checkpoint_hash(checkpoint), ImportanceSettings(sentences=5), 50.0, "sig", [], {})
    table.write(checkpoint)
    assert find_table(checkpoint) is not None
    assert find_table(checkpoint, ImportanceSettings(sentences=5)) is not None
    assert find_table(checkpoint, ImportanceSettings(sentences=6)) is None
    (checkpoint / "config.json").write_text((checkpoint / "config.json").read_text() + "\n")
    assert find_table(checkpoint) is None
