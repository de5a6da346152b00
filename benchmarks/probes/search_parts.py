"""Two parts of the search, each against what it replaced, in one process, interleaved round by round.

    python -m benchmarks.probes.search_parts [ROUNDS] [SENTENCES]

1. `row_top_k` ÷ `torch.topk` on (rows, 8,000) log-probabilities, k = 8 (beam 4 keeps 2k per row): rows 4
   (beam 4, one sentence), 32 and 128 (beam 4 over a batch of 32 sentences); microseconds per call.
2. The folded cross-attention (`explorer/fastpath/folded_cross.py`) ÷ the unfolded one, on the shipped
   checkpoint translating one sentence at a time (what the app does for a typed sentence), greedy and beam 4:
   milliseconds per sentence.
3. Beam 4 over batches of 32 with each top-k, sentences per second.
4. Beam 4 on one sentence with its candidates ranked in Python (`search._top_candidates_few`, up to
   `search._FEW_ROWS` rows) ÷ with the batched tensor operations, milliseconds per sentence.
Sentences: the first SENTENCES (default 100) of Multi30k test2016 where the data is found, else the
checkpoint's own examples. Medians over ROUNDS (default 3); each ratio is new ÷ old, below 1.00 is faster for
times, above 1.00 for sentences per second. Outputs are compared too: the two ways must translate alike.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any
from unittest.mock import patch

from benchmarks import command_line_runtime

command_line_runtime(__name__)

import torch

import explorer.decoding.candidates as search
import explorer.fastpath.packed_decoding as packed_decoding
from benchmarks.common import SHIPPED_CHECKPOINT, sample_sentences
from benchmarks.probes import rounds_and_sentences
from explorer.checkpoint import load_checkpoint
from explorer.decoding.top_k import row_top_k
from explorer.fastpath.folded_cross import worth_folding
from explorer.inference import translate


def _plain_top_k(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    return x.topk(k, dim=1)


def _median_us(call: Callable[[], object], repeats: int = 200) -> float:
    for _ in range(10):
        call()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        times.append((time.perf_counter() - start) / repeats * 1e6)
    return statistics.median(times)


def _order(ways: dict[str, Any], round_index: int) -> list[str]:
    """The ways in one order on even rounds and the other on odd ones, so that neither always goes first."""
    return list(ways) if round_index % 2 == 0 else list(ways)[::-1]


def main(rounds: int = 3, count: int = 100) -> int:
    torch.set_num_threads(min(2, torch.get_num_threads()))
    checkpoint = load_checkpoint(SHIPPED_CHECKPOINT, "cpu")
    model, tokenizer = checkpoint.model, checkpoint.tokenizer
    sentences = sample_sentences(count)
    top_k_ways = {"topk": _plain_top_k, "row_top_k": row_top_k}
    fold_ways = {"unfolded": lambda *sizes: False, "folded": worth_folding}
    few_ways = {"tensors": 0, "python": search._FEW_ROWS}
    times: dict[tuple[str, ...], list[float]] = {}
    outputs: dict[tuple[str, ...], list[list[int]]] = {}
    translate(model, tokenizer, sentences[:8], beam_size=4)  # packing, kernel choice
    with torch.inference_mode():
        for r in range(rounds):
            for rows in (4, 32, 128):
                x = torch.randn(rows, 8000).log_softmax(dim=-1)
                for name in _order(top_k_ways, r):
                    call = partial(top_k_ways[name], x, 8)
                    times.setdefault(("top_k", str(rows), name), []).append(_median_us(call))
            for name in _order(fold_ways, r):
                with patch.object(packed_decoding, "worth_folding", fold_ways[name]):
                    for beam in (1, 4):
                        start = time.perf_counter()
                        found = [translate(model, tokenizer, [s], beam_size=beam)[0] for s in sentences]
                        elapsed = (time.perf_counter() - start) / len(sentences) * 1e3
                        times.setdefault(("fold", str(beam), name), []).append(elapsed)
                        outputs[("fold", str(beam), name)] = [t.output_ids for t in found]
            for name in _order(few_ways, r):
                with patch.object(search, "_FEW_ROWS", few_ways[name]):
                    start = time.perf_counter()
                    found = [translate(model, tokenizer, [s], beam_size=4)[0] for s in sentences]
                    elapsed = (time.perf_counter() - start) / len(sentences) * 1e3
                    times.setdefault(("few", name), []).append(elapsed)
                    outputs[("few", name)] = [t.output_ids for t in found]
            for name in _order(top_k_ways, r):
                with patch.object(search, "row_top_k", top_k_ways[name]):
                    start = time.perf_counter()
                    found = translate(model, tokenizer, sentences, beam_size=4, batch_size=32)
                    times.setdefault(("batch", name), []).append(len(sentences) / (time.perf_counter() - start))
                    outputs[("batch", name)] = [t.output_ids for t in found]
    med = {key: statistics.median(values) for key, values in times.items()}
    print(f"{len(sentences)} sentences, {torch.get_num_threads()} threads, {rounds} rounds (medians)")
    print("| part | old | new | new ÷ old |")
    print("|---|---:|---:|---:|")
    for rows in (4, 32, 128):
        old, new = med[("top_k", str(rows), "topk")], med[("top_k", str(rows), "row_top_k")]
        print(f"| top 8 of ({rows}, 8000), µs | {old:.0f} | {new:.0f} | {new / old:.2f}× |")
    for beam, label in ((1, "greedy"), (4, "beam 4")):
        old, new = med[("fold", str(beam), "unfolded")], med[("fold", str(beam), "folded")]
        print(f"| one sentence, {label}, ms (folded cross-attention) | {old:.2f} | {new:.2f} | {new / old:.2f}× |")
    old, new = med[("few", "tensors")], med[("few", "python")]
    print(f"| one sentence, beam 4, ms (candidates ranked in Python) | {old:.2f} | {new:.2f} | {new / old:.2f}× |")
    old, new = med[("batch", "topk")], med[("batch", "row_top_k")]
    print(f"| beam 4, batches of 32, sent/s (row_top_k) | {old:.1f} | {new:.1f} | {new / old:.2f}× |")
    for part, a, b in (("fold", "unfolded", "folded"), ("few", "tensors", "python"), ("batch", "topk", "row_top_k")):
        for key in [k for k in outputs if k[0] == part and k[-1] == a]:
            same = sum(x == y for x, y in zip(outputs[key], outputs[key[:-1] + (b,)], strict=True))
            print(f"identical outputs, {' '.join(key[:-1])}: {same}/{len(sentences)}")
    return 0


if __name__ == "__main__":
    args = rounds_and_sentences("benchmarks.probes.search_parts", __doc__, rounds=3, sentences=100)
    sys.exit(main(args.rounds, args.sentences))
