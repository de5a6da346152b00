"""The classroom: 40 people press Translate at once. Run it as the app runs:

    python -m benchmarks.probes.classroom [ROUNDS]

Nothing but the app's own start-up line (`configure_for("app")`, before torch) decides the runtime settings.
Each request is the Translate page's call: one sentence (a different test2016 sentence per request), all
attention maps, greedy as the page opens. Three ways, interleaved round by round,
each request timed from submission to result:

- sequential: 40 requests one after another (the baseline, and what a single-threaded server does);
- threads: 40 threads call `explorer.inference.translate` at once (one torch thread each, as the app runs,
  so the two cores serve two requests at a time; torch releases the GIL inside its operations);
- batched: 40 threads call `explorer.serving.translate_served` at once (concurrent requests as one batch).

Prints p50, p95 and total per way (medians over rounds) and total ÷ sequential. Goal: p95 ≤ 1.0 s and
total ≤ 0.7× sequential.
"""

from __future__ import annotations

import sys

from benchmarks.probes import add_rounds, parser
from explorer.runtime import configure_for

configure_for("app")

import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from explorer.checkpoint import load_checkpoint
from explorer.data import load_multi30k
from explorer.inference import translate
from explorer.serving import translate_served

if TYPE_CHECKING:
    from explorer.model import Transformer
    from explorer.tokenizer import Tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]
N_REQUESTS = 40
OPTIONS: dict[str, Any] = {"beam_size": 1, "alpha": 0.6, "with_attention": True}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def sequential(model: Transformer, tokenizer: Tokenizer, sentences: list[str]) -> tuple[list[float], float]:
    start = time.perf_counter()
    latencies = []
    for sentence in sentences:
        translate(model, tokenizer, [sentence], **OPTIONS)
        latencies.append(time.perf_counter() - start)  # each waited for all before it, as in a queue
    return latencies, time.perf_counter() - start


def concurrent(
    call: Callable[..., object], model: Transformer, tokenizer: Tokenizer, sentences: list[str]
) -> tuple[list[float], float]:
    latencies = [0.0] * len(sentences)
    barrier = threading.Barrier(len(sentences) + 1)

    def request(i: int) -> None:
        barrier.wait()
        begin = time.perf_counter()
        call(model, tokenizer, [sentences[i]], **OPTIONS)
        latencies[i] = time.perf_counter() - begin

    threads = [threading.Thread(target=request, args=(i,)) for i in range(len(sentences))]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return latencies, time.perf_counter() - start


def main(rounds: int = 3) -> int:
    c = load_checkpoint(REPO_ROOT / "checkpoints" / "multi30k-en-de", "cpu")
    source = list(load_multi30k("test2016").source)
    ways = {
        "sequential": lambda s: sequential(c.model, c.tokenizer, s),
        "threads": lambda s: concurrent(translate, c.model, c.tokenizer, s),
        "batched": lambda s: concurrent(translate_served, c.model, c.tokenizer, s),
    }
    for way in ways.values():  # warm-up
        way(source[:4])
    figures: dict[str, dict[str, list[float]]] = {w: {"p50": [], "p95": [], "total": []} for w in ways}
    loads = []
    for r in range(rounds):
        sentences = source[N_REQUESTS * (r + 1) : N_REQUESTS * (r + 2)]  # different sentences every round
        loads.append(os.getloadavg()[0])
        for name in list(ways) if r % 2 == 0 else list(ways)[::-1]:
            latencies, total = ways[name](sentences)
            figures[name]["p50"].append(_percentile(latencies, 50))
            figures[name]["p95"].append(_percentile(latencies, 95))
            figures[name]["total"].append(total)
            print(
                f"  round {r + 1}/{rounds} {name}: p50 {figures[name]['p50'][-1]:.3f} s, "
                f"p95 {figures[name]['p95'][-1]:.3f} s, total {total:.3f} s",
                flush=True,
            )
    print(
        f"\n{N_REQUESTS} requests (one sentence + all maps, greedy), torch threads {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {rounds} rounds, "
        f"1-minute load {min(loads):.1f}–{max(loads):.1f}"
    )
    print("| way | p50 (s) | p95 (s) | total (s) | total ÷ sequential |\n|---|---:|---:|---:|---:|")
    for name, f in figures.items():
        ratio = statistics.median(t / s for t, s in zip(f["total"], figures["sequential"]["total"], strict=False))
        print(
            f"| {name} | {statistics.median(f['p50']):.3f} | {statistics.median(f['p95']):.3f} | "
            f"{statistics.median(f['total']):.3f} | {ratio:.2f}× |"
        )
    return 0


if __name__ == "__main__":
    command = parser("benchmarks.probes.classroom", __doc__)
    add_rounds(command, 3)
    sys.exit(main(command.parse_args().rounds))
