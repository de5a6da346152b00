"""Synthetic tasks are deterministic and held out; batches respect the token budget with little padding."""

from __future__ import annotations

import random

import pytest
import torch

from explorer.data.batching import Batch, collate, padding_fraction, token_budget_batches
from explorer.data.synthetic import TASKS, make_splits, make_task, symbols, task_description
from explorer.tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer


# ------------------------------------------------------------------------------------------- synthetic
def test_tasks_transform_as_described() -> None:
    expected = {"copy": "c a b a", "reverse": "a b a c", "sort": "a a b c", "shift": "a b a c"}
    for name, target in expected.items():
        assert TASKS[name].transform([2, 0, 1, 0]) == [symbols(3).index(t) for t in target.split()]
        assert task_description(name)
    with pytest.raises(ValueError, match="unknown task"):
        make_task("nope", 3)


def test_make_task_is_deterministic_and_in_range() -> None:
    a = make_task("reverse", 50, min_len=3, max_len=6, n_symbols=5, seed=7)
    assert a == make_task("reverse", 50, min_len=3, max_len=6, n_symbols=5, seed=7)
    assert a.source != make_task("reverse", 50, min_len=3, max_len=6, n_symbols=5, seed=8).source
    assert len(a) == 50 and a.dropped == 0
    for src, tgt in zip(a.source, a.target, strict=True):
        words = src.split()
        assert 3 <= len(words) <= 6 and set(words) <= set("abcde")
        assert tgt.split() == words[::-1]


def test_many_symbols_sort_by_index() -> None:
    alphabet = symbols(30)
    assert len(set(alphabet)) == 30 and alphabet == sorted(alphabet)
    corpus = make_task("sort", 20, n_symbols=30, seed=1)
    for src, tgt in zip(corpus.source, corpus.target, strict=True):
        assert tgt.split() == sorted(src.split(), key=alphabet.index)


def test_splits_are_held_out() -> None:
    train, val = make_splits("copy", 500, 100, seed=3, min_len=2, max_len=4, n_symbols=6)
    assert (len(train), len(val)) == (500, 100)
    assert not set(train.source) & set(val.source)
    assert len(set(train.source)) == 500
    assert make_splits("copy", 500, 100, seed=3, min_len=2, max_len=4, n_symbols=6) == (train, val)
    with pytest.raises(ValueError, match="distinct"):
        make_splits("copy", 100, 10, min_len=2, max_len=2, n_symbols=5)


def test_word_tokenizer_on_a_task_gives_one_id_per_symbol() -> None:
    corpus = make_task("copy", 200, seed=0)
    tok = Tokenizer.train(corpus.source + corpus.target, vocab_size=100, model_type="word")
    assert tok.vocab_size == 4 + 20
    src = corpus.source[0]
    assert len(tok.encode(src)) == len(src.split()) and tok.decode(tok.encode(src)) == src


# -------------------------------------------------------------------------------------------- batching
def _realistic_lengths(n: int, seed: int = 0) -> tuple[list[int], list[int]]:
    """Roughly Multi30k-shaped subword lengths: ~14 source tokens, target a little longer."""
    rng = random.Random(seed)
    src = [max(1, int(rng.gauss(14, 5))) for _ in range(n)]
    tgt = [max(2, int(s * rng.uniform(0.9, 1.4))) for s in src]
    return src, tgt


def test_budget_respected_and_every_index_once() -> None:
    src, tgt = _realistic_lengths(3000)
    batches = token_budget_batches(src, tgt, 1000, shuffle=True, seed=0)
    assert sorted(i for b in batches for i in b) == list(range(3000))
    for b in batches:
        assert len(b) * max(max(src[i], tgt[i]) for i in b) <= 1000
    # Greedy packing fills batches: on average well over half the budget is used.
    assert 3000 * 14 / len(batches) > 500


def test_overlong_pair_gets_its_own_batch() -> None:
    batches = token_budget_batches([3, 50, 4, 5], [3, 2, 4, 5], 20, shuffle=False)
    assert [1] in batches
    assert sorted(i for b in batches for i in b) == [0, 1, 2, 3]


def test_batching_is_deterministic_per_seed() -> None:
    src, tgt = _realistic_lengths(2000)
    first = token_budget_batches(src, tgt, 800, shuffle=True, seed=5)
    assert first == token_budget_batches(src, tgt, 800, shuffle=True, seed=5)
    assert first != token_budget_batches(src, tgt, 800, shuffle=True, seed=6)
    unshuffled = token_budget_batches(src, tgt, 800, shuffle=False)
    assert unshuffled == token_budget_batches(src, tgt, 800, shuffle=False, seed=99)
    lengths = [max(src[b[0]], tgt[b[0]]) for b in unshuffled]
    assert lengths == sorted(lengths), "without shuffle, batches come shortest first"


def test_little_padding_on_realistic_lengths() -> None:
    src, tgt = _realistic_lengths(5000)
    batches = token_budget_batches(src, tgt, 2000, shuffle=True, seed=0)
    grouped = padding_fraction(batches, src, tgt)
    rng = random.Random(0)
    order = list(range(5000))
    rng.shuffle(order)
    size = 5000 // len(batches)
    unsorted = [order[i : i + size] for i in range(0, 5000, size)]
    assert grouped < 0.10
    assert grouped < padding_fraction(unsorted, src, tgt) / 3


def test_padding_fraction_by_hand() -> None:
    # Batch [0, 1]: src lengths 2, 4 -> 8 slots, 6 real; tgt lengths 3, 3 -> 6 slots, 6 real.
    assert padding_fraction([[0, 1]], [2, 4], [3, 3]) == pytest.approx(1 - 12 / 14)
    assert padding_fraction([], [], []) == 0.0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="target lengths"):
        token_budget_batches([1, 2], [1], 10, shuffle=False)
    with pytest.raises(ValueError, match="positive"):
        token_budget_batches([1], [1], 0, shuffle=False)


def test_collate_shapes_and_special_tokens() -> None:
    batch = collate([[5, 6, 7], [8]], [[9, 10], [11, 12, 13, 14]])
    assert isinstance(batch, Batch) and batch.size == 2
    assert batch.src.tolist() == [[5, 6, 7], [8, PAD_ID, PAD_ID]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 9, 10, PAD_ID, PAD_ID], [BOS_ID, 11, 12, 13, 14]]
    assert batch.tgt_out.tolist() == [[9, 10, EOS_ID, PAD_ID, PAD_ID], [11, 12, 13, 14, EOS_ID]]
    assert batch.n_tgt_tokens == 3 + 5 == int((batch.tgt_out != PAD_ID).sum())
    assert batch.src.dtype == torch.long and batch.tgt_in.dtype == torch.long
    moved = batch.to("cpu")
    assert torch.equal(moved.tgt_out, batch.tgt_out) and moved.n_tgt_tokens == batch.n_tgt_tokens


def test_collate_truncates_leaving_room_for_bos_eos() -> None:
    batch = collate([list(range(10, 20))], [list(range(30, 40))], max_len=4)
    assert batch.src.tolist() == [[10, 11, 12, 13]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 30, 31, 32]]
    assert batch.tgt_out.tolist() == [[30, 31, 32, EOS_ID]]
    with pytest.raises(ValueError, match="empty"):
        collate([], [])
