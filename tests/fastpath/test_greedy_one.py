"""Greedy search of one sentence runs its bookkeeping in Python numbers (`search._greedy_one`); it returns what
the batched path (`search._greedy_rows`) returns for the same sentence: tokens, per-token log-probs, sum, score
and whether it finished, with or without reaching the length limit."""

from __future__ import annotations

import pytest
import torch

from explorer.decoding import search
from explorer.inference import scorer_for
from tests.engine.test_model import make_model

SOURCES = [[5, 6, 7, 3], [9, 8, 7, 6, 5, 4, 3], [11, 3]]


@pytest.mark.parametrize("max_len", [1, 3, 30])
@pytest.mark.parametrize("source", SOURCES, ids=["short", "longer", "one token"])
@torch.inference_mode()
def test_one_sentence_gives_what_the_batched_path_gives(source, max_len):
    model = make_model().eval()
    config = model.config
    src = torch.tensor([source])

    def fresh():
        return scorer_for(model, src)

    (one,) = search.greedy_search(fresh(), 1, config.bos_id, config.eos_id, max_len, alpha=0.6)
    (rows,) = search._greedy_rows(fresh(), 1, config.bos_id, config.eos_id, max_len, search._Score(0.6, "gnmt"), None)
    assert one == rows
    assert len(one.tokens) <= max_len


@torch.inference_mode()
def test_one_sentence_takes_the_python_path_and_a_batch_or_a_repeat_ban_does_not(monkeypatch):
    model = make_model().eval()
    config = model.config
    taken: list[str] = []
    monkeypatch.setattr(
        search, "_greedy_one", lambda *a, **k: taken.append("one") or search.Hypothesis((), 0.0, (), 0.0, False)
    )
    real_rows = search._greedy_rows
    monkeypatch.setattr(search, "_greedy_rows", lambda *a, **k: taken.append("rows") or real_rows(*a, **k))
    search.greedy_search(scorer_for(model, torch.tensor([[5, 3]])), 1, config.bos_id, config.eos_id, 5)
    search.greedy_search(scorer_for(model, torch.tensor([[5, 3], [6, 3]])), 2, config.bos_id, config.eos_id, 5)
    search.greedy_search(
        scorer_for(model, torch.tensor([[5, 3]])), 1, config.bos_id, config.eos_id, 5, no_repeat_ngram=2
    )
    assert taken == ["one", "rows", "rows"]
