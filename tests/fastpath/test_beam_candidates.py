"""Beam search ranks a few rows' candidates in Python (`_top_candidates_few`) and many rows' with tensor
operations; both give the same candidates, values and order (explorer/decoding/candidates.py)."""

from __future__ import annotations

import math

import pytest
import torch

from explorer.decoding import candidates as search
from explorer.decoding.candidates import top_candidates as _top_candidates
from explorer.decoding.hypotheses import LiveHypothesis as _Live


def _lives(sizes: list[int], generator: torch.Generator) -> list[list[_Live]]:
    return [
        [_Live((), (), -float(torch.rand(1, generator=generator)) * 5, node_id=0, parent_id=None) for _ in range(n)]
        for n in sizes
    ]


@pytest.mark.parametrize(
    "sizes, vocab, beam",
    [([1], 8000, 4), ([4], 8000, 4), ([4, 4], 8000, 4), ([1, 3, 4], 50, 4), ([2], 3, 4), ([5], 8000, 5)],
    ids=["first step", "one beam", "two beams", "uneven", "tiny vocabulary", "beam 5"],
)
def test_few_rows_rank_like_the_batched_path(sizes, vocab, beam, monkeypatch):
    generator = torch.Generator().manual_seed(sum(sizes) + vocab)
    lives = _lives(sizes, generator)
    log_probs = torch.randn(sum(sizes), vocab, generator=generator).log_softmax(dim=-1)
    log_probs[0, :: max(vocab // 7, 1)] = -math.inf  # banned tokens (no_repeat_ngram)
    monkeypatch.setattr(search, "_FEW_ROWS", 10**6)
    few = _top_candidates(log_probs, lives, beam)
    monkeypatch.setattr(search, "_FEW_ROWS", 0)
    batched = _top_candidates(log_probs, lives, beam)
    assert few == batched
    finite = [int(rows.isfinite().sum()) for rows in _per_sentence(log_probs, sizes)]
    assert [len(c) for c in few] == [min(2 * beam, n) for n in finite]


def _per_sentence(log_probs: torch.Tensor, sizes: list[int]) -> list[torch.Tensor]:
    return list(log_probs.split(sizes))


def test_a_row_with_every_token_banned_but_one_gives_only_finite_candidates(monkeypatch):
    log_probs = torch.full((1, 8000), -math.inf)
    log_probs[0, 42] = -0.5
    lives = [[_Live((), (), -1.0, node_id=0, parent_id=None)]]
    monkeypatch.setattr(search, "_FEW_ROWS", 10**6)
    assert _top_candidates(log_probs, lives, 4) == [[(-1.5, 0, 42, -0.5)]]


@pytest.mark.parametrize("sizes", [[4] * 32, [1] * 32, [4] * 16], ids=["beams of 32 sentences", "first step", "16"])
def test_many_uniform_rows_rank_by_group_like_row_by_row(sizes, monkeypatch):
    """Sentences with as many live rows each are ranked by `grouped_top_k`, the others row by row; the same
    candidates, values and order (distinct random values: no ties)."""
    generator = torch.Generator().manual_seed(len(sizes))
    lives = _lives(sizes, generator)
    log_probs = torch.randn(sum(sizes), 10000, generator=generator).log_softmax(dim=-1)
    calls = []
    grouped = search.grouped_top_k
    monkeypatch.setattr(search, "grouped_top_k", lambda *a: calls.append(1) or grouped(*a))
    fast = _top_candidates(log_probs, lives, 4)
    assert calls, "the grouped path served these rows"
    monkeypatch.setattr(search, "grouped_applies", lambda x, k: False)
    assert fast == _top_candidates(log_probs, lives, 4)
