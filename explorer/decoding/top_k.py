"""The k best entries of every row of a (rows, vocab) tensor: `torch.topk` along dim 1, faster on a CPU.

Beam search cuts every live row to its best 2k tokens at every step (`search._top_candidates`). On the CPU,
`topk` walks each row element by element: for beam 4 over batches of 32 (128 rows, the shipped 8,000-piece
vocabulary) it took 0.67 ms a step, more than the log-softmax before it (0.28 ms). A vectorised maximum is
about eight times faster per element (82 against 677 µs over the same 128 rows), so `row_top_k` looks at
the row's chunks first:
1. the maximum of every chunk of `CHUNK` entries (one vectorised pass over the row);
2. the k chunks with the largest maxima: the k best entries lie in them (an entry in a chunk outside them is
   beaten by the k larger chunk maxima, so it is not among the k best), together with the < CHUNK entries
   of a last, partial chunk;
3. `topk` over those k·CHUNK entries only.
0.40 ms instead of 0.67 ms for that step (`python -m benchmarks.search_parts`). The values are exactly `topk`'s; the
indices too, except where equal values compete for the last places, where either may be returned (as
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
