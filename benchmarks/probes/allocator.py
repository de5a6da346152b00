"""glibc malloc's thresholds as the entry points fix them (`explorer.runtime.configure_allocator`) against its
defaults: page faults and speed of batch translation, each setting in fresh processes.

    python -m benchmarks.probes.allocator [ROUNDS] [SENTENCES]

A child process translates the first N Multi30k test2016 sentences (beam 4, then greedy, batches of 32, the
engine's `translate` as `explorer translate` calls it), then the first N/5 one sentence at a time, with the
allocator configured or left as glibc starts it, and reports its minor page faults and sentences per second per
cell. Settings alternate round by round
(on, off, then off, on, ...) so that background load hits both alike; the ratio of each cell is the median
over rounds of off's time ÷ on's. Both children run with the OpenMP wait policy `explorer translate` would choose
now (unless the caller set one) and 2 torch threads, and set nothing else (EXPLORER_RUNTIME=as-given): the
allocator's effect depends on the wait policy (with the OpenMP runtime's default, beam 4 over batches faulted
about as often configured as not).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.probes import child_command, rounds_and_sentences

REPO_ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO_ROOT / "checkpoints" / "multi30k-en-de"
# (cell, beam, batch): one sentence at a time over the first fifth of the sentences
CELLS = (
    ("beam 4, batches of 32", 4, 32),
    ("greedy, batches of 32", 1, 32),
    ("beam 4, one sentence", 4, 1),
    ("greedy, one sentence", 1, 1),
)


def child(setting: str, n: int) -> dict[str, Any]:
    """Translate the first `n` test2016 sentences per cell; what `main` reads back as JSON."""
    from explorer.runtime import configure_allocator

    os.environ.pop("EXPLORER_RUNTIME", None)  # as-given kept anything else from being set when torch loads
    configured = configure_allocator() if setting == "on" else False
    import torch

    from explorer.checkpoint import load_checkpoint
    from explorer.data import load_multi30k
    from explorer.inference import translate

    torch.set_num_threads(2)
    checkpoint = load_checkpoint(CHECKPOINT, "cpu")
    sentences = list(load_multi30k("test2016").source[:n])
    translate(checkpoint.model, checkpoint.tokenizer, sentences[:32], beam_size=4, batch_size=32)  # warm-up
    cells, outputs = {}, {}
    for cell, beam, batch in CELLS:
        work = sentences if batch > 1 else sentences[: max(len(sentences) // 5, 1)]
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        if batch > 1:
            found = translate(checkpoint.model, checkpoint.tokenizer, work, beam_size=beam, batch_size=batch)
        else:
            found = [translate(checkpoint.model, checkpoint.tokenizer, [s], beam_size=beam)[0] for s in work]
        seconds = time.perf_counter() - start
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        cells[cell] = {"seconds": seconds, "sentences": len(work), "faults_per_sentence": faults / len(work)}
        outputs[cell] = [t.output for t in found]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"configured": configured, "cells": cells, "outputs": outputs, "peak_mib": peak_mib}


def run_child(setting: str, n: int) -> dict[str, Any]:
    from explorer.runtime import load_per_core, settings_for

    cli = settings_for("cli", load_per_core())  # the wait policy, as the command line sets it where unset
    env = {**cli, **os.environ, "EXPLORER_RUNTIME": "as-given", "OMP_NUM_THREADS": "2"}
    done = subprocess.run(
        child_command("benchmarks.probes.allocator", setting, str(n)),
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(rounds: int = 3, n: int = 300) -> int:
    runs: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    for r in range(rounds):
        for setting in ("on", "off") if r % 2 == 0 else ("off", "on"):
            runs[setting].append(run_child(setting, n))
    assert all(run["configured"] for run in runs["on"]), "configure_allocator did not apply (not glibc?)"
    same = all(a["outputs"] == b["outputs"] for a, b in zip(runs["on"], runs["off"], strict=True))
    print(f"{n} sentences, {rounds} rounds, outputs identical: {same}")
    print(f"{'cell':<24} {'faults/sentence on':>19} {'off':>8} {'sent/s on':>10} {'off':>8} {'off ÷ on time':>14}")
    for cell, _, _ in CELLS:
        faults = [statistics.median(r["cells"][cell]["faults_per_sentence"] for r in runs[s]) for s in ("on", "off")]
        speed = [
            statistics.median(r["cells"][cell]["sentences"] / r["cells"][cell]["seconds"] for r in runs[s])
            for s in ("on", "off")
        ]
        ratio = statistics.median(
            off["cells"][cell]["seconds"] / on["cells"][cell]["seconds"]
            for on, off in zip(runs["on"], runs["off"], strict=True)
        )
        print(f"{cell:<24} {faults[0]:>19.1f} {faults[1]:>8.1f} {speed[0]:>10.1f} {speed[1]:>8.1f} {ratio:>13.2f}×")
    peaks = [statistics.median(run["peak_mib"] for run in runs[s]) for s in ("on", "off")]
    print(f"peak memory: {peaks[0]:.0f} MiB on, {peaks[1]:.0f} MiB off")
    return 0


if __name__ == "__main__":
    args = rounds_and_sentences("benchmarks.probes.allocator", __doc__, 3, 300, child=("SETTING", "SENTENCES"))
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
    else:
        sys.exit(main(args.rounds, args.sentences))
