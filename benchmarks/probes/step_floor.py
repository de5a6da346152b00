"""What a greedy decoder step of one sentence spends outside its weight products.

    python -m benchmarks.probes.step_floor [ROUNDS] [SENTENCES]

The shipped checkpoint on MKL's kernels (the probe sets `EXPLORER_ONEDNN=0`: it splits the step into MKL's
products; oneDNN's packed weights have other shapes), the first SENTENCES (default 100) of Multi30k test2016 (else
the checkpoint's own examples), 2 threads. For each sentence the encoder and `PackedDecoder.start` run once (not
timed); then, round by round, alternating:
- "a step as shipped": the scripted greedy loop (`scripted_decoding.greedy`, what a typed sentence runs), its time
  ÷ the steps it took;
- "its weight products alone": the same products a step makes (per layer W^QKV, W^O, the two folded
  cross-attention products, W_1, W_2; then the output projection), on the same tensors and shapes, one row, as
  many times as the sentence took steps, nothing else between them;
- "the output's log-softmax and maximum alone": those two calls on one row of logits.
Then one pass times each product alone in the same sequence (µs a call and the GB/s it reads its weight at), and
the output projection also through torch's oneDNN linear (prepacked), the other kernel torch has for it.
The rest of a step (about 50 small operations: LayerNorms, residual sums, the attention kernel, the softmax,
writing the keys and values, the embedding) is the first minus the other two. A step reads its weights from the
last-level cache, so the products are timed in the order the step reads them, not one weight repeated (which would
stay in the core's own cache and read 2-3x faster). CTranslate2's whole step on the same weights comes from
`python -m benchmarks.probes.peer_steps` (run separately: it needs the `peers` extra).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from benchmarks import command_line_runtime

command_line_runtime(__name__)

import torch

from benchmarks.common import SHIPPED_CHECKPOINT, sample_sentences
from benchmarks.probes import rounds_and_sentences
from explorer.checkpoint import load_checkpoint
from explorer.fastpath import linear_kernels, scripted_decoding
from explorer.fastpath.linear_kernels import ONEDNN, onednn_usable
from explorer.inference import PackedScorer, encode_sources, scorer_for

if TYPE_CHECKING:
    from explorer.inference import PackedCache  # the cache a PackedScorer holds

Pair = tuple[torch.Tensor, torch.Tensor]  # (bias, weight) of one product


def _products(flat: list[torch.Tensor], folded: list[torch.Tensor], few_rows: list[int]) -> list[Pair]:
    """Per layer the (bias, weight) pairs a one-row step multiplies by, in its order, as
    `scripted_decoding.decoder_layers` picks them (W_2 in the layout MklFeedForward uses for one row)."""
    second = scripted_decoding.second_ffn_weight(1, few_rows)
    pairs = []
    for layer in range(len(flat) // scripted_decoding.PER_LAYER):
        w, c = scripted_decoding.PER_LAYER * layer, scripted_decoding.PER_FOLDED * layer
        pairs += [
            (flat[w + 1], flat[w]),  # W^QKV
            (flat[w + 3], flat[w + 2]),  # W^O
            (folded[c + 1], folded[c]),  # folded scores
            (folded[c + 3], folded[c + 2]),  # folded values
            (flat[w + 5], flat[w + 4]),  # W_1
            (flat[w + 7], flat[w + second]),  # W_2
        ]
    return pairs


def _run_products(pairs: list[Pair], output: torch.Tensor, rows: list[torch.Tensor], steps: int) -> None:
    """The products of `steps` steps; rows[i] is a one-row input of pair i's width, the last one the output
    projection's (their values do not matter)."""
    for _ in range(steps):
        for (bias, weight), x in zip(pairs, rows[:-1], strict=True):
            torch.addmm(bias, x, weight)
        torch.mm(rows[-1], output)


PRODUCT_NAMES = ("W^QKV", "W^O", "folded scores", "folded values", "W_1", "W_2")


def _one_by_one(
    work: list[tuple[list[Pair], list[torch.Tensor]]],
    lengths: list[int],
    output_product: Callable[[torch.Tensor], object],
) -> list[float]:
    """µs a call of each product in a step's order (each timed alone, in the same sequence as a step makes them,
    so that each reads its weight from where the step finds it), the output projection last, made by
    `output_product(row)`."""
    totals = [0.0] * (len(work[0][0]) + 1)
    calls = 0
    for (pairs, rows), steps in zip(work, lengths, strict=True):
        for _ in range(steps):
            for index, ((bias, weight), x) in enumerate(zip(pairs, rows[:-1], strict=True)):
                start = time.perf_counter()
                torch.addmm(bias, x, weight)
                totals[index] += time.perf_counter() - start
            start = time.perf_counter()
            output_product(rows[-1])
            totals[-1] += time.perf_counter() - start
            calls += 1
    return [t / calls * 1e6 for t in totals]


def main(rounds: int = 5, n: int = 100) -> int:
    torch.set_num_threads(2)
    os.environ[linear_kernels.VARIABLE] = "0"  # the products split below are MKL's, whatever this CPU would choose
    loaded = load_checkpoint(SHIPPED_CHECKPOINT, "cpu")
    config, model = loaded.config, loaded.model
    ids, _ = encode_sources(loaded.tokenizer, sample_sentences(n), config.max_len, config.eos_id)
    with torch.inference_mode():
        scorers = [s for s in (scorer_for(model, torch.tensor([s])) for s in ids) if isinstance(s, PackedScorer)]
        if len(scorers) < len(ids):
            print("the shipped model does not take the packed path here: nothing to measure")
            return 1
        decoder = scorers[0].decoder
        weights = decoder.scripted_weights
        if weights is None or scripted_decoding.scripted() is None:
            print("the scripted greedy loop does not apply here (module doc of explorer/fastpath/scripted_decoding.py)")
            return 1
        caches = [s.cache for s in scorers]
        limits = [len(s) + 50 for s in ids]
        output = decoder.output[0]  # (d_model, vocab), MKL's (in, out) copy
        work = []  # per sentence: its (bias, weight) pairs and a one-row input for each, the output's last
        for cache in caches:
            folded = scripted_decoding._one_group_folded(cache)
            assert folded is not None
            pairs = _products(weights.flat, folded, weights.few_rows)
            rows = [torch.randn(1, weight.shape[0]) for _, weight in pairs] + [torch.randn(1, output.shape[0])]
            work.append((pairs, rows))
        logits = torch.randn(1, output.shape[1])
        step_bytes = 4 * sum(w.numel() for _, w in work[0][0]) + 4 * output.numel()

        def greedy(cache: PackedCache, limit: int) -> list[int]:
            found = scripted_decoding.greedy(decoder, cache, config.bos_id, config.eos_id, limit)
            assert found is not None
            return found[0]

        # Greedy search is deterministic: every round takes these steps (one per output token).
        lengths = [len(greedy(cache, limit)) for cache, limit in zip(caches, limits, strict=True)]
        steps_per_round = sum(lengths)

        def shipped() -> float:
            start = time.perf_counter()
            for cache, limit in zip(caches, limits, strict=True):
                greedy(cache, limit)
            return time.perf_counter() - start

        def products() -> float:
            start = time.perf_counter()
            for (pairs, rows), steps in zip(work, lengths, strict=True):
                _run_products(pairs, output, rows, steps)
            return time.perf_counter() - start

        def head() -> float:
            start = time.perf_counter()
            for _ in range(steps_per_round):
                torch.log_softmax(logits, dim=-1).max(dim=-1)
            return time.perf_counter() - start

        products()
        by_product = _one_by_one(work, lengths, lambda row: torch.mm(row, output))
        onednn = None
        if onednn_usable(output):  # torch's own oneDNN linear, prepacked, on the same output projection
            packed = (ONEDNN.pack(output.t()), None)
            _one_by_one(work, lengths, lambda row: ONEDNN.apply(row, packed, False))  # warm-up
            onednn = _one_by_one(work, lengths, lambda row: ONEDNN.apply(row, packed, False))[-1]
        figures: dict[str, list[float]] = {"step": [], "products": [], "head": []}
        for index in range(rounds):
            order = ("step", "products", "head") if index % 2 == 0 else ("head", "products", "step")
            for name in order:
                seconds = shipped() if name == "step" else products() if name == "products" else head()
                figures[name].append(seconds / steps_per_round * 1e6)
    step, prods, tail = (statistics.median(figures[k]) for k in ("step", "products", "head"))
    print(
        f"{len(ids)} sentences, {steps_per_round} greedy steps a round, 2 threads, {rounds} alternating rounds; "
        "µs a step (median of rounds)"
    )
    print("| part | µs a step | share |")
    print("|---|---:|---:|")
    print(f"| a step as shipped (scripted greedy loop) | {step:.1f} | 100% |")
    print(
        f"| its weight products alone ({step_bytes / 2**20:.1f} MiB, {step_bytes / prods / 1e3:.1f} GB/s) "
        f"| {prods:.1f} | {prods / step:.0%} |"
    )
    print(f"| the output's log-softmax and maximum alone | {tail:.1f} | {tail / step:.0%} |")
    rest = step - prods - tail
    print(f"| the rest (about 50 small operations) | {rest:.1f} | {rest / step:.0%} |")
    print(
        "\nThe products one by one, in a step's order, one pass (µs a call, layer by layer; the folded products' "
        "size is the first sentence's heads × source pieces):"
    )
    print("| product | weight | µs a call | GB/s |")
    print("|---|---|---:|---:|")
    pairs = work[0][0]
    layers = len(pairs) // len(PRODUCT_NAMES)
    for kind, name in enumerate(PRODUCT_NAMES):
        calls = [by_product[layer * len(PRODUCT_NAMES) + kind] for layer in range(layers)]
        weight = pairs[kind][1]
        size = 4 * weight.numel()
        shape = "×".join(str(d) for d in weight.shape)
        print(f"| {name} ({layers} layers) | {shape} | {_list(calls)} | {_list([size / c / 1e3 for c in calls])} |")
    size, mkl = 4 * output.numel(), by_product[-1]
    print(f"| output projection, MKL | {output.shape[0]}×{output.shape[1]} | {mkl:.1f} | {size / mkl / 1e3:.1f} |")
    if onednn is not None:
        name = "output projection, torch's oneDNN linear (prepacked)"
        print(f"| {name} | same | {onednn:.1f} | {size / onednn / 1e3:.1f} |")
    return 0


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


if __name__ == "__main__":
    args = rounds_and_sentences("benchmarks.probes.step_floor", __doc__, rounds=5, sentences=100)
    sys.exit(main(args.rounds, args.sentences))
