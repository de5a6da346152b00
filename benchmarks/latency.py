"""Latency of what the app does for one sentence: `explorer.inference.translate(..., with_attention=True)` on a
15-word sentence, CPU. Median and 95th percentile over repeated calls, next to the same call without the
attention maps and with beam search (k = 4), interleaved.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import torch

from benchmarks.common import (
    Options,
    Result,
    apply_threads,
    every_round,
    interleaved,
    paired_ratio,
    percentile,
    print_table,
    ratio_text,
    skipped_off_cpu,
    threads_text,
)
from benchmarks.decoding import load_model
from benchmarks.memory import memory_rows
from explorer.inference import translate

if TYPE_CHECKING:
    from explorer.inference import Translation

NAME = "latency"
TITLE = "Latency, one sentence"
SENTENCE = "Two young men in red jackets are playing football together on a large green field ."  # 15 words
VARIANTS = ("greedy + attention", "greedy, no attention", "beam 4 + attention")
MEMORY_VARIANTS = ("greedy + attention",)
ONE_THREAD = "greedy + attention, 1 thread"


def _variants(opts: Options) -> tuple[dict[str, Callable[[], object]], str]:
    apply_threads(opts)
    model, tokenizer, label, extra = load_model(opts)
    model = model.to(opts.device)

    def call(beam: int, attention: bool) -> Callable[[], object]:
        return lambda: translate(
            model, tokenizer, [SENTENCE], beam_size=beam, with_attention=attention, max_extra_tokens=extra
        )

    variants = {
        "greedy + attention": call(1, True),
        "greedy, no attention": call(1, False),
        "beam 4 + attention": call(4, True),
    }
    threads = torch.get_num_threads()
    if threads > 1:
        # Does the intra-op thread pool pay for one sentence? (Decoding one row is many tiny ops.)
        def one_thread() -> object:
            torch.set_num_threads(1)
            try:
                return variants["greedy + attention"]()
            finally:
                torch.set_num_threads(threads)

        variants[ONE_THREAD] = one_thread
    return variants, label


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    if skipped_off_cpu(opts, result):
        return result
    fns, label = _variants(opts)
    (out,) = cast("list[Translation]", fns["greedy + attention"]())
    print(f"  model: {label}", flush=True)
    print(
        f"  sentence ({len(SENTENCE.split()) - 1} words + '.'): {SENTENCE!r} -> {len(out.output_ids)} output pieces; "
        f"{threads_text()}",
        flush=True,
    )
    rounds = opts.n_rounds(60, 5)
    times = interleaved(
        every_round(fns),
        rounds=rounds,
        warmup=opts.n_warmup(3, 1),
        device=opts.device,
        progress=False,
        clock=opts.clock,
    )
    table = [
        (name, f"{statistics.median(t) * 1e3:.1f} ms", f"{percentile(t, 95) * 1e3:.1f} ms") for name, t in times.items()
    ]
    print_table(("variant", "median", "p95"), table)
    main = times["greedy + attention"]
    median, p95 = statistics.median(main) * 1e3, percentile(main, 95) * 1e3
    clock = " (CPU time)" if opts.clock == "cpu" else ""
    result.add(
        f"translate + all attention (greedy): median{clock}",
        f"{median:.1f} ms",
        "< 150 ms",
        median < 150 if not opts.quick else None,
    )
    result.add(f"translate + all attention (greedy): p95{clock}", f"{p95:.1f} ms")
    overhead = paired_ratio(main, times["greedy, no attention"])
    result.add("time with attention ÷ without (greedy)", ratio_text(overhead))
    print(
        f"  translate + attention: median {median:.1f} ms, p95 {p95:.1f} ms; with attention ÷ without: "
        f"{ratio_text(overhead)}; beam 4 ÷ greedy (both with attention): "
        f"{ratio_text(paired_ratio(times['beam 4 + attention'], main))}",
        flush=True,
    )
    beam = times["beam 4 + attention"]
    result.add(
        f"beam 4 + attention: median / p95{clock}",
        f"{statistics.median(beam) * 1e3:.1f} / {percentile(beam, 95) * 1e3:.1f} ms",
    )
    if ONE_THREAD in times:
        ratio = paired_ratio(times[ONE_THREAD], main)
        result.add(f"time, 1 thread ÷ {torch.get_num_threads()} threads (greedy + attention)", ratio_text(ratio))
        print(f"  time with 1 thread ÷ with {torch.get_num_threads()} threads: {ratio_text(ratio)}", flush=True)
    result.note(f"{label}; {rounds} interleaved calls per variant; {threads_text()}")
    if opts.memory:
        memory_rows(result, NAME, MEMORY_VARIANTS, opts)
    return result


def memory_setup(opts: Options, variant: str) -> Callable[[], object]:
    fns, _ = _variants(opts)
    return fns[variant]
