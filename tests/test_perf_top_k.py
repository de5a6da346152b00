"""`row_top_k` returns what `torch.topk(k, dim=1)` returns, on every path it takes (explorer/decoding/top_k.py).

Rows of distinct values, so that the indices are determined too; the beam's own rows (-inf for banned tokens,
fewer than k finite entries) compare values everywhere and indices where the values are finite and distinct.
"""

from __future__ import annotations

import pytest
import torch

from explorer.decoding.top_k import CHUNK, row_top_k


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
