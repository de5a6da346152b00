"""Attention capture overhead: a teacher-forced forward pass with every attention map requested
(`need_weights=True`, the explicit softmax(QKᵀ/√d)V path) vs without (the fused SDPA kernel).

Measured on batches of test sentences with their reference translations, in inference mode, and on a
single sentence (what the app does for one input). A third variant also cuts each sentence's maps out of the
batch as numpy arrays, as `explorer.inference.attention_for` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from benchmarks import common
from benchmarks.decoding import load_model
from benchmarks.memory import memory_rows
from explorer.data.batching import Batch
from explorer.model import Transformer

NAME = "attention"
TITLE = "Attention capture overhead"
VARIANTS = ("fused (no maps)", "maps (need_weights=True)", "maps + per-sentence numpy")
MEMORY_VARIANTS = ("fused (no maps)", "maps (need_weights=True)")


@dataclass
class AttentionSetup:
    model: Transformer
    batches: list[Batch]
    lengths: list[list[tuple[int, int]]]  # per batch: (source, target) length of each row
    model_label: str
    data_label: str


def setup(opts: common.Options, batch_size: int | None = None) -> AttentionSetup:
    common.apply_threads(opts)
    model, tokenizer, label, _ = load_model(opts)
    config = model.config
    n = 16 if opts.quick else 128
    if common.multi30k_available():
        en = common.read_lines(common.MULTI30K / "test2016.en")[:n]
        de = common.read_lines(common.MULTI30K / "test2016.de")[:n]
        src, tgt = tokenizer.encode_batch(en), tokenizer.encode_batch(de)
        data = "Multi30k test2016 pairs"
    else:
        src = common.synthetic_ids(common.synthetic_lengths(n, opts.seed), config.vocab_size, opts.seed)
        tgt = common.synthetic_ids(common.synthetic_lengths(n, opts.seed + 1), config.vocab_size, opts.seed + 1)
        data = "synthetic pairs"
    limit = config.max_len - 1
    src, tgt = [s[:limit] for s in src], [t[:limit] for t in tgt]
    size = batch_size or (8 if opts.quick else 32)
    order = sorted(range(len(src)), key=lambda i: len(src[i]))
    batches, lengths = [], []
    for start in range(0, len(order), size):
        chunk = order[start : start + size]
        batches.append(common.collate_pairs(src, tgt, chunk, config, opts.device))
        lengths.append([(len(src[i]) + 1, len(tgt[i]) + 1) for i in chunk])
    return AttentionSetup(model, batches, lengths, label, f"{len(src)} {data} in batches of {size}, sorted by length")


def _variant(a: AttentionSetup, name: str) -> Callable[[], None]:
    @torch.inference_mode()
    def work() -> None:
        for batch, lengths in zip(a.batches, a.lengths, strict=False):
            out = a.model(batch.src, batch.tgt_in, need_weights=not name.startswith("fused"))
            if name.startswith("maps +"):
                [out.attention.sentence(i, s, t) for i, (s, t) in enumerate(lengths)]

    return work


def run(opts: common.Options) -> common.Result:
    result = common.Result(NAME, TITLE)
    rounds = opts.n_rounds(10, 3)
    ratios = {}
    for batch_size, label in ((None, "batch"), (1, "one sentence")):
        a = setup(opts, batch_size)
        if batch_size is None:
            print(f"  model: {a.model_label}", flush=True)
        print(f"  {label}: {a.data_label}", flush=True)
        fns = {name: _variant(a, name) for name in VARIANTS}
        times = common.interleaved(
            common.every_round(fns),
            rounds=rounds,
            warmup=opts.n_warmup(1, 1),
            device=opts.device,
            clock=opts.clock,
        )
        fused = times[VARIANTS[0]]
        table = [
            (
                name,
                f"{sum(times[name]) / rounds * 1e3:.1f} ms",
                common.ratio_text(common.paired_ratio(times[name], fused)),
            )
            for name in VARIANTS
        ]
        common.print_table((f"{label}: variant", "time per pass", "÷ fused"), table)
        ratios[label] = common.paired_ratio(times[VARIANTS[1]], fused)
        result.add(
            f"{label}: time with all maps ÷ without",
            common.ratio_text(ratios[label]),
            "≤ 1.30×",
            ratios[label] <= 1.3 if not opts.quick else None,
        )
        result.add(
            f"{label}: … plus per-sentence numpy maps ÷ without",
            common.ratio_text(common.paired_ratio(times[VARIANTS[2]], fused)),
        )
    result.note(f"{a.model_label}; teacher-forced forward in inference mode; {rounds} interleaved rounds")
    if opts.memory:
        memory_rows(result, NAME, MEMORY_VARIANTS, opts)
    return result


def memory_setup(opts: common.Options, variant: str) -> Callable[[], None]:
    return _variant(setup(opts), variant)
