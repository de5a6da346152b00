"""The explain page's two slow computations (explorer/explain/): attribution of one output token with 32
integrated-gradient steps (what the page's attribution view computes per click), and the AER of every
cross-attention head over Multi30k test2016 (the Heads page's alignment section and `explorer heads align`).

Attribution is timed beside one teacher-forced pass of the same sentence (`value_weighted` runs one per attention
module), so the ratio says what the 32 steps cost in passes; both on the shipped checkpoint, or an untrained model
when there is none. The AER is timed once over all 1000 test2016 pairs (20 with --quick), against the project's
reference (explorer/explain/data).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from benchmarks import common
from benchmarks.decoding import load_model
from explorer.explain.attribution import IG_STEPS, attribute
from explorer.explain.head_alignment import MULTI30K_TEST2016, align_heads, read_reference
from explorer.inference import attention_for, translate

NAME = "explain"
TITLE = "Explain: attribution of one token, AER of every head"
SENTENCE = "A man in a blue shirt is walking his dog down the street."
GOAL_S = 1.0  # above this the page computes under a spinner with progress (the threshold)


def _attribution_variants(opts: common.Options) -> tuple[dict[str, Callable[[int], object]], str, int]:
    model, tokenizer, label, _ = load_model(opts)
    (found,) = translate(model, tokenizer, [SENTENCE])
    position = len(found.output_ids) // 2  # a word in the middle of the translation
    steps = 4 if opts.quick else IG_STEPS

    def integrated(_: int) -> object:
        return attribute(model, found.source_ids, found.output_ids, [position], n_steps=steps)

    @torch.inference_mode()
    def one_pass(_: int) -> object:
        return attention_for(model, [found.source_ids], [found.output_ids])

    return {f"integrated gradients, {steps} steps": integrated, "one teacher-forced pass": one_pass}, label, steps


def run(opts: common.Options) -> common.Result:
    common.apply_threads(opts)
    result = common.Result(NAME, TITLE)
    variants, label, steps = _attribution_variants(opts)
    rounds = opts.n_rounds(5, 2)
    times = common.interleaved(
        variants, rounds=rounds, warmup=opts.n_warmup(1, 1), device=opts.device, clock=opts.clock
    )
    ig, one = list(variants)
    seconds = sorted(times[ig])[len(times[ig]) // 2]
    ratio = common.paired_ratio(times[ig], times[one])
    common.print_table(
        ("variant", "median time", "÷ one pass"),
        [
            (ig, f"{seconds * 1e3:.1f} ms", common.ratio_text(ratio)),
            (one, f"{sorted(times[one])[rounds // 2] * 1e3:.1f} ms", "1.00×"),
        ],
    )
    result.add(
        f"attribution of one output token, {steps} integrated-gradient steps",
        f"{seconds * 1e3:.0f} ms",
        f"≤ {GOAL_S:.0f} s, else in the background",
        seconds <= GOAL_S if not opts.quick else None,
    )
    result.add(f"… ÷ one teacher-forced pass ({one})", common.ratio_text(ratio))
    if common.multi30k_available():
        model, tokenizer, _, _ = load_model(opts)
        n = 20 if opts.quick else 1000
        sources = common.read_lines(common.MULTI30K / "test2016.en")[:n]
        targets = common.read_lines(common.MULTI30K / "test2016.de")[:n]
        references = read_reference(MULTI30K_TEST2016)[:n]
        elapsed, scores = common.timed(
            lambda: align_heads(model, tokenizer, sources, targets, references), opts.device, opts.clock
        )
        heads = scores[0].heads.size
        result.add(f"AER of all {heads} cross-attention heads, as read and shifted, over {n} test2016 pairs",
                   f"{elapsed:.2f} s")  # fmt: skip
        print(f"  AER over {n} pairs: {elapsed:.2f} s", flush=True)
    else:
        result.note("Multi30k test2016 not found: the AER was not timed")
    result.note(f"{label}; {rounds} interleaved rounds; sentence {SENTENCE!r}")
    return result


def memory_setup(opts: common.Options, variant: str) -> Callable[[], object]:
    variants, _, _ = _attribution_variants(opts)
    fn = variants[variant] if variant in variants else next(iter(variants.values()))
    return lambda: fn(0)
