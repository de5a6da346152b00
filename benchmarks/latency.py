"""Latency of what the app does for one sentence: `explorer.inference.translate(..., with_attention=True)` on a
15-word sentence, CPU. Median and 95th percentile over repeated calls, next to the same call without the
attention maps and with beam search (k = 4), interleaved.
"""

from __future__ import annotations

import statistics
from typing import Callable

import torch

from benchmarks.common import Options, Result, apply_threads, interleaved, memory_rows, paired_ratio, percentile, \
    print_table, ratio_text
from benchmarks.decoding import load_model
from explorer.inference import translate

NAME = "latency"
TITLE = "Latency, one sentence"
SENTENCE = "Two young men in red jackets are playing football together on a large green field ."  # 15 words
VARIANTS = ("greedy + attention", "greedy, no attention", "beam 4 + attention")
MEMORY_VARIANTS = ("greedy + attention",)


def _variants(opts: Options) -> tuple[dict[str, Callable[[], object]], str]:
    apply_threads(opts)
    model, tokenizer, label, extra = load_model(opts)
    model = model.to(opts.device)

    def call(beam: int, attention: bool) -> Callable[[], object]:
        return lambda: translate(model, tokenizer, [SENTENCE], beam_size=beam, with_attention=attention,
                                 max_extra_tokens=extra)

    return {"greedy + attention": call(1, True), "greedy, no attention": call(1, False),
            "beam 4 + attention": call(4, True)}, label


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    if opts.device.startswith("cuda"):
        result.skipped = "CPU only"
        return result
    fns, label = _variants(opts)
    out = fns["greedy + attention"]()[0]
    print(f"  model: {label}", flush=True)
    print(f"  sentence ({len(SENTENCE.split()) - 1} words + '.'): {SENTENCE!r} -> {len(out.output_ids)} output pieces; "
          f"{torch.get_num_threads()} threads", flush=True)
    rounds = opts.n_rounds(60, 5)
    times = interleaved({n: (lambda r, fn=fn: fn()) for n, fn in fns.items()}, rounds=rounds,
                        warmup=opts.n_warmup(3, 1), device=opts.device, progress=False)
    table = [(name, f"{statistics.median(t) * 1e3:.1f} ms", f"{percentile(t, 95) * 1e3:.1f} ms")
             for name, t in times.items()]
    print_table(("variant", "median", "p95"), table)
    main = times["greedy + attention"]
    median, p95 = statistics.median(main) * 1e3, percentile(main, 95) * 1e3
    result.add("translate + all attention (greedy): median", f"{median:.1f} ms", "< 150 ms",
               median < 150 if not opts.quick else None)
    result.add("translate + all attention (greedy): p95", f"{p95:.1f} ms")
    overhead = paired_ratio(main, times["greedy, no attention"])
    result.add("with attention ÷ without (greedy)", ratio_text(overhead))
    print(f"  translate + attention: median {median:.1f} ms, p95 {p95:.1f} ms; with attention ÷ without: "
          f"{ratio_text(overhead)}; beam 4 ÷ greedy (both with attention): "
          f"{ratio_text(paired_ratio(times['beam 4 + attention'], main))}", flush=True)
    beam = times["beam 4 + attention"]
    result.add("beam 4 + attention: median / p95",
               f"{statistics.median(beam) * 1e3:.1f} / {percentile(beam, 95) * 1e3:.1f} ms")
    result.note(f"{label}; {rounds} interleaved calls per variant; {torch.get_num_threads()} threads")
    if opts.memory:
        memory_rows(result, NAME, MEMORY_VARIANTS, opts)
    return result


def memory_setup(opts: Options, variant: str) -> Callable[[], object]:
    fns, _ = _variants(opts)
    return fns[variant]
