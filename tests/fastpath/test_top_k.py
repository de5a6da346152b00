"""`row_top_k` returns what `torch.topk(k, dim=1)` returns, on every path it takes (explorer/decoding/top_k.py).

Rows of distinct values, so that the indices are determined too; the beam's own rows (-inf for banned tokens,
fewer than k finite entries) compare values everywhere and indices where the values are finite and distinct.
"""

from __future__ import annotations

import pytest
import torch

from explorer.decoding.top_k import CHUNK, grouped_applies, grouped_top_k, row_top_k


def _rows(rows: int, vocab: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(rows, vocab, generator=generator).log_softmax(dim=-1)


@pytest.mark.parametrize(
    "rows, vocab, k",
    [
        (128, 8000, 8),  # beam 4 over 32 sentences, the shipped vocabulary: whole chunks
        (16, 8003, 8),  # a partial last chunk, whose entries are all candidates
        (4, 8000, 8),  # beam 4 on one sentence: plain topk
        (1, 32000, 2),  # one row, greedy-like k
        (16, 8 * CHUNK * 4, 8),  # just enough chunks for the chunk pass
        (16, 8 * CHUNK * 4 - 1, 8),  # one entry fewer: plain topk
        (2, 50, 8),  # the test models' vocabulary
    ],
)
def test_row_top_k_equals_topk(rows, vocab, k):
    x = _rows(rows, vocab)
    values, index = row_top_k(x, k)
    expected_values, expected_index = x.topk(k, dim=1)
    assert torch.equal(values, expected_values)
    assert torch.equal(index, expected_index)


def test_the_best_entries_in_the_last_partial_chunk_and_in_one_chunk_are_found():
    """The k best all in one chunk (the chunk pass must keep it however many it holds), or in the partial tail."""
    x = _rows(16, 8003)
    x[0, 640:648] = torch.arange(8, dtype=x.dtype)  # eight best in chunk 10
    x[1, 8000:8003] = torch.tensor([5.0, 4.0, 3.0])  # three best in the tail of three
    values, index = row_top_k(x, 8)
    assert index[0].tolist() == list(range(647, 639, -1))
    assert index[1, :3].tolist() == [8000, 8001, 8002]
    assert torch.equal(values, x.topk(8, dim=1).values)


def test_a_non_contiguous_input_gives_the_same_result():
    x = _rows(8000, 16).t()  # (16, 8000), columns of a contiguous tensor
    assert not x.is_contiguous()
    values, index = row_top_k(x, 8)
    assert torch.equal(values, x.topk(8, dim=1).values)
    assert torch.equal(index, x.topk(8, dim=1).indices)


def test_banned_tokens_and_rows_with_fewer_than_k_finite_entries():
    """What no_repeat_ngram leaves: -inf entries; a row with only 3 allowed tokens gives those 3, then -inf."""
    x = _rows(16, 8000)
    x[0, ::2] = -torch.inf
    x[1, :] = -torch.inf
    x[1, [17, 4242, 7999]] = torch.tensor([-1.0, -2.0, -3.0])
    values, index = row_top_k(x, 8)
    expected = x.topk(8, dim=1)
    assert torch.equal(values, expected.values)
    finite = values.isfinite()
    assert torch.equal(index[finite], expected.indices[finite])
    assert index[1, :3].tolist() == [17, 4242, 7999]
    assert finite[1].tolist() == [True] * 3 + [False] * 5


def test_many_rows_take_the_chunk_pass_and_a_few_rows_plain_topk(monkeypatch):
    """128 rows never run `topk` over a whole row (the slow part, module doc); 4 rows do, once."""
    seen: list[tuple[int, ...]] = []
    original = torch.Tensor.topk

    def recording(self, *args, **kwargs):
        seen.append(tuple(self.shape))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "topk", recording)
    row_top_k(_rows(128, 8000), 8)
    assert seen and all(shape[1] < 8000 for shape in seen), seen
    seen.clear()
    row_top_k(_rows(4, 8000), 8)
    assert seen == [(4, 8000)]


def _ranked(x: torch.Tensor, offsets: torch.Tensor, groups: int, k: int) -> tuple[torch.Tensor, ...]:
    """Every x + offset of a group in float64, ranked whole: what `grouped_top_k` must return."""
    rows, vocab = x.shape
    values, index = (x.double() + offsets[:, None]).view(groups, -1).topk(k, dim=1)
    return values, index // vocab, index % vocab, x.reshape(groups, -1).gather(1, index)


@pytest.mark.parametrize(
    "groups, m, vocab",
    [
        (32, 4, 10000),  # beam 4 over 32 sentences, the shipped vocabulary (a partial last chunk of 16)
        (32, 1, 10000),  # the first step: one row a sentence
        (16, 4, 8000),  # whole chunks only
        (5, 4, 8 * 2 * CHUNK * 4 + 3),  # just enough chunks for k = 16
        (4, 8, 4096),  # beam 8
    ],
)
def test_grouped_top_k_ranks_each_group_as_a_whole(groups, m, vocab):
    k = 2 * m if m > 1 else 8
    x = _rows(groups * m, vocab, seed=groups + m)
    offsets = torch.randn(groups * m, generator=torch.Generator().manual_seed(vocab), dtype=torch.float64) * 3
    assert grouped_applies(x, k)
    got, want = grouped_top_k(x, offsets, groups, k), _ranked(x, offsets, groups, k)
    for name, a, b in zip(("sums", "rows", "columns", "entries"), got, want, strict=True):
        assert torch.equal(a, b), name


def test_grouped_top_k_keeps_banned_tokens_out_and_leaves_small_or_odd_inputs_to_the_old_path():
    x = _rows(64, 10000)
    x[:, 100:9000] = -torch.inf  # a row with few finite entries (a ban, as `no_repeat_ngram` makes)
    offsets = torch.zeros(64, dtype=torch.float64)
    values, _, columns, _ = grouped_top_k(x, offsets, 16, 8)
    assert torch.isfinite(values).all() and ((columns < 100) | (columns >= 9000)).all()
    assert torch.equal(values, _ranked(x, offsets, 16, 8)[0])
    assert not grouped_applies(_rows(8, 10000), 8), "a few rows: the Python ranking"
    assert not grouped_applies(_rows(32, 300), 8), "too few chunks"
    assert not grouped_applies(_rows(32, 10000).double(), 8)
    assert not grouped_applies(_rows(32, 20000)[:, ::2], 8), "not contiguous"
