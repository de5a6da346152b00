"""The k best entries of every row of a (rows, vocab) tensor: `torch.topk` along dim 1, faster on a CPU.

Beam search cuts every live row to its best 2k tokens at every step (`candidates.top_candidates`). On the CPU,
`topk` walks each row element by element: for beam 4 over batches of 32 (128 rows, the shipped 8,000-piece
vocabulary) it took 0.67 ms a step, more than the log-softmax before it (0.28 ms). A vectorised maximum is
about eight times faster per element (82 against 677 µs over the same 128 rows), so `row_top_k` looks at
the row's chunks first:
1. the maximum of every chunk of `CHUNK` entries (one vectorised pass over the row);
2. the k chunks with the largest maxima: the k best entries lie in them (an entry in a chunk outside them is
   beaten by the k larger chunk maxima, so it is not among the k best), together with the < CHUNK entries
   of a last, partial chunk;
3. `topk` over those k·CHUNK entries only.
0.40 ms instead of 0.67 ms for that step (`python -m benchmarks.probes.search_parts`). The values are exactly
`topk`'s; the indices too, except where equal values compete for the last places, where either may be returned (as
`topk` itself documents nothing about its order among ties). Short rows, a few rows (`_MIN_ROWS`), and GPUs
call `topk` directly.
"""

from __future__ import annotations

import torch

CHUNK = 64  # entries per chunk: the fastest of 16-500 for 128 rows of 8,000, 2 threads (module doc)
_MIN_CHUNKS_PER_K = 4  # below k·CHUNK·4 entries a row, the chunk pass saves less than it costs
# Below this many rows `topk` itself: at 4 rows (beam 4, one sentence) the two were equal alone (39 against
# 41 µs), and within a search, between the step's products, the chunk pass's extra operations cost
# 0.3-0.5 ms a sentence more than they saved.
_MIN_ROWS = 16


def row_top_k(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """x (rows, vocab) -> (values (rows, k), indices (rows, k)), best first, as `x.topk(k, dim=1)`."""
    rows, vocab = x.shape
    full = vocab // CHUNK
    if x.device.type != "cpu" or rows < _MIN_ROWS or full < k * _MIN_CHUNKS_PER_K:
        return x.topk(k, dim=1)
    tail = full * CHUNK
    chunks = x.unfold(1, CHUNK, CHUNK)  # (rows, full, CHUNK), a view without the last partial chunk
    _, best_chunks = chunks.amax(dim=2).topk(k, dim=1)  # (rows, k)
    candidates = chunks.gather(1, best_chunks.unsqueeze(2).expand(rows, k, CHUNK)).reshape(rows, k * CHUNK)
    if tail < vocab:  # the partial chunk's entries are all candidates, after the chunks'
        candidates = torch.cat([candidates, x[:, tail:]], dim=1)
    values, position = candidates.topk(k, dim=1)
    # A candidate's place -> its column in x: chunk-major within the k chunks, then the partial chunk.
    in_chunks = position < k * CHUNK
    chunk = best_chunks.gather(1, torch.where(in_chunks, position // CHUNK, 0))
    index = torch.where(in_chunks, chunk * CHUNK + position % CHUNK, position - k * CHUNK + tail)
    return values, index


def grouped_applies(x: torch.Tensor, k: int) -> bool:
    """Whether `grouped_top_k` serves x: float32 rows on a CPU, contiguous, many of them, long enough to chunk."""
    rows, vocab = x.shape
    return (
        x.device.type == "cpu"
        and x.dtype == torch.float32
        and x.is_contiguous()
        and rows >= _MIN_ROWS
        and vocab // CHUNK >= k * _MIN_CHUNKS_PER_K
    )


def grouped_top_k(
    x: torch.Tensor, offsets: torch.Tensor, groups: int, k: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The k largest of x[r, v] + offsets[r] over each group of rows, best first, on a CPU.

    x (groups·m, vocab) float32, contiguous, in groups of m consecutive rows (a sentence's live hypotheses);
    offsets (groups·m,) float64 (their cumulative log-probabilities). Returns, each (groups, k), best first:
    the sums (float64), the row within the group, the column v, and x[r, v] itself (float32).

    Beam search ranks a sentence's continuations this way (`candidates.top_candidates`). Cutting every row to its
    own best k first (`row_top_k`) and ranking those took 0.68 ms a step for 32 sentences × 4 rows of 10,000:
    `torch.topk` costs about a microsecond a row, and ran over 128 rows twice. Here the chunks come first, per
    group:
    1. the maximum of every chunk of `CHUNK` entries of every row, plus the row's offset (float64);
    2. the k best chunks of the whole group (one `topk` per group over its m·chunks maxima): the group's k best
       entries lie in them or in a row's last, partial chunk (an entry of a chunk outside them is beaten by the
       k maxima of those chunks, each at least as large, rounded alike);
    3. one `topk` per group over those k·CHUNK entries and every row's partial chunk, summed in float64 as the
       search sums them.
    The values are exactly those of ranking every x + offset in float64; among equal values the order is
    topk's (the search documents ties as either).
    """
    rows, vocab = x.shape
    m = rows // groups
    full = vocab // CHUNK
    tail = full * CHUNK
    assert m * groups == rows and full >= k, f"{rows} rows in {groups} groups, {full} chunks for k={k}"
    chunks = x[:, :tail].view(rows, full, CHUNK)  # a view without the partial chunks
    chunk_max = chunks.amax(dim=2).double() + offsets[:, None]  # (rows, full)
    _, best = chunk_max.view(groups, m * full).topk(k, dim=1)  # (groups, k): row in group · full + chunk
    row_in_group = torch.div(best, full, rounding_mode="floor")  # (groups, k)
    picked = chunks[row_in_group + torch.arange(groups).unsqueeze(1) * m, best % full]  # (groups, k, CHUNK)
    picked_offsets = offsets.view(groups, m).gather(1, row_in_group)  # (groups, k)
    entries = picked.view(groups, k * CHUNK)  # float32
    sums = (picked.view(groups, k, CHUNK).double() + picked_offsets.unsqueeze(2)).view(groups, k * CHUNK)
    width = vocab - tail
    if width:  # every row's partial chunk: all candidates, after the chunks'
        ends = x[:, tail:]  # (rows, width)
        entries = torch.cat([entries, ends.reshape(groups, m * width)], dim=1)
        end_sums = (ends.double() + offsets[:, None]).view(groups, m * width)
        sums = torch.cat([sums, end_sums], dim=1)
    values, position = sums.topk(k, dim=1)  # (groups, k)
    in_chunks = position < k * CHUNK
    slot = torch.where(in_chunks, torch.div(position, CHUNK, rounding_mode="floor"), 0)
    end_position = (position - k * CHUNK).clamp_min(0)  # place among the partial chunks' entries
    end_row = torch.div(end_position, max(width, 1), rounding_mode="floor")
    row = torch.where(in_chunks, row_in_group.gather(1, slot), end_row)
    column = torch.where(
        in_chunks, (best.gather(1, slot) % full) * CHUNK + position % CHUNK, tail + end_position % max(width, 1)
    )
    return values, row, column, entries.gather(1, position)
