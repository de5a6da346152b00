"""`python -m benchmarks --profile training decoding`: where the time goes, by torch.profiler.

Prints the operators that take the most self time in a few explorer training steps and in a beam-search
decoding pass, plus the share of wall time spent outside torch operators (Python and search bookkeeping).
"""

from __future__ import annotations

import time

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.common import Options, synchronize


def _report(prof: profile, wall: float, title: str, rows: int = 25, on_gpu: bool = False) -> None:
    events = prof.key_averages()
    sort = "self_device_time_total" if on_gpu else "self_cpu_time_total"
    print(f"\n-- {title} --")
    print(events.table(sort_by=sort, row_limit=rows))
    op_time = sum(e.self_cpu_time_total for e in events) / 1e6
    print(
        f"wall {wall:.3f} s; torch operators (self CPU) {op_time:.3f} s "
        f"= {op_time / wall:.0%} of wall; the rest is Python, allocation and waiting"
    )


def profile_training(opts: Options, steps: int = 4, which: str = "explorer") -> None:
    from benchmarks import training

    s = training.setup(opts, steps + 2)
    step = training.step_functions(s, opts.seed, only=which)[which]
    for batch in s.batches[:2]:
        step(batch)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if opts.device.startswith("cuda") else [])
    with profile(activities=activities, record_shapes=False) as prof:
        start = time.perf_counter()
        for batch in s.batches[2:]:
            step(batch)
        synchronize(opts.device)
        wall = time.perf_counter() - start
    _report(prof, wall, f"{which} training, {steps} steps, {s.preset_name}", on_gpu=opts.device.startswith("cuda"))


def profile_decoding(opts: Options) -> None:
    from benchmarks import decoding

    d = decoding.setup(opts)
    decoding.decode_all(d, beam_size=4, scorer="cache")  # warm-up
    with profile(activities=[ProfilerActivity.CPU], record_shapes=False) as prof:
        start = time.perf_counter()
        decoding.decode_all(d, beam_size=4, scorer="cache")
        wall = time.perf_counter() - start
    _report(prof, wall, f"beam search k=4 with the cache, {len(d.source_ids)} sentences ({d.model_label})")


def run(name: str, opts: Options) -> None:
    torch.manual_seed(opts.seed)
    if name == "training-reference":
        profile_training(opts, which="nn.Transformer")
    else:
        {"training": profile_training, "decoding": profile_decoding}[name](opts)
