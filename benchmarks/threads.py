"""Entry points under each OpenMP/thread setting: `explorer translate` and the app's translate call.

Every configuration runs the real entry point in a fresh process whose environment is the configuration and
nothing else (a child that imported a package setting OMP_WAIT_POLICY on import would measure that package's
choice, not the configuration's):

- cli: `explorer translate -c checkpoints/multi30k-en-de --beam K` on Multi30k test2016 (stdin), the whole
  process timed (start-up and loading included, as a user waits for it); greedy and beam 4;
- app: `python -m benchmarks.app_entry`, which starts as app.py does (`configure_for("app")` before torch) and times
  the Translate page's call (one sentence, all attention maps, greedy as the page opens) per sentence.

"OpenMP default" sets EXPLORER_RUNTIME=as-given, so the entry point sets nothing; "as shipped" sets nothing at
all and lets the entry point choose (`explorer.runtime.SETTINGS`). Configurations alternate order round by
round (A B C …, then … C B A) so background load hits them alike; ratios are medians over rounds of paired
times. The entry point is "within 1.15× of the best" when as-shipped ÷ best ≤ 1.15.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import (
    MULTI30K,
    REPO_ROOT,
    Options,
    Result,
    paired_ratio,
    print_table,
    ratio_text,
    skipped_off_cpu,
)

NAME = "threads"
TITLE = "Entry points: OpenMP wait policy and threads"
CHECKPOINT = REPO_ROOT / "checkpoints" / "multi30k-en-de"
CONFIGS: dict[str, dict[str, str] | None] = {  # name -> environment added (None: as shipped, nothing added)
    "as shipped": None,
    "OpenMP default": {"EXPLORER_RUNTIME": "as-given"},
    "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
    "OMP_WAIT_POLICY=ACTIVE": {"OMP_WAIT_POLICY": "ACTIVE"},
    "1 thread": {"OMP_NUM_THREADS": "1", "EXPLORER_RUNTIME": "as-given"},
}
RUNTIME_VARIABLES = ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "EXPLORER_RUNTIME", "GOMP_SPINCOUNT")


def _env(config: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RUNTIME_VARIABLES}
    env.update(CONFIGS[config] or {})
    return env


def _explorer_command() -> list[str]:
    script = Path(sys.executable).with_name("explorer")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "explorer"]


def _cli_seconds(config: str, beam: int, source: Path, n_lines: int) -> float | None:
    """Wall time of one `explorer translate` process over the first n_lines of `source`."""
    lines = source.read_text(encoding="utf-8").splitlines()[:n_lines]
    command = _explorer_command() + ["translate", "-c", str(CHECKPOINT), "--beam", str(beam)]
    start = time.perf_counter()
    done = subprocess.run(
        command,
        input="\n".join(lines) + "\n",
        env=_env(config),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        print(f"    cli / {config} failed: {done.stderr.strip()[-300:]}", flush=True)
        return None
    return elapsed


def _app_seconds(config: str, n_sentences: int) -> float | None:
    """Median seconds per Translate-page call (one sentence, all maps, greedy) in one fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "times.json"
        command = [sys.executable, "-m", "benchmarks.app_entry", str(out), str(n_sentences), "1"]
        done = subprocess.run(command, env=_env(config), cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not out.is_file():
            print(f"    app / {config} failed: {done.stderr.strip()[-300:]}", flush=True)
            return None
        return statistics.median(json.loads(out.read_text())["times"])


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    if skipped_off_cpu(opts, result):
        return result
    source = MULTI30K / "test2016.en"
    if not source.is_file() or not (CHECKPOINT / "config.json").is_file():
        result.skipped = "needs Multi30k test2016 and checkpoints/multi30k-en-de"
        return result
    reps = 1 if opts.quick else (opts.rounds or 3)
    n_lines = 50 if opts.quick else 1000
    n_app = 5 if opts.quick else 30
    workloads = {
        f"explorer translate --beam 4, {n_lines} sentences (s)": lambda c: _cli_seconds(c, 4, source, n_lines),
        f"explorer translate --beam 1, {n_lines} sentences (s)": lambda c: _cli_seconds(c, 1, source, n_lines),
        "app: one sentence + all maps, greedy (ms per call)": lambda c: _app_seconds(c, n_app),
    }
    names = list(CONFIGS)
    load_seen = []
    for workload, measure in workloads.items():
        per_rep: dict[str, list[float]] = {name: [] for name in names}
        for rep in range(reps):
            load_seen.append(os.getloadavg()[0])
            for name in names if rep % 2 == 0 else names[::-1]:
                seconds = measure(name)
                if seconds is None:
                    continue
                per_rep[name].append(seconds)
                print(f"    {workload}, round {rep + 1}/{reps}, {name}: {seconds:.3f} s", flush=True)
        if not all(len(v) == reps for v in per_rep.values()):
            result.add(workload, "n/a (a child process failed)")
            continue
        scale = 1e3 if "ms" in workload else 1.0
        best = min(names, key=lambda n: statistics.median(per_rep[n]))
        table = []
        for name in names:
            slower = paired_ratio(per_rep[name], per_rep[best])
            table.append((name, f"{statistics.median(per_rep[name]) * scale:.2f}", ratio_text(slower)))
            result.add(
                f"{workload}, {name}",
                f"{statistics.median(per_rep[name]) * scale:.2f} ({ratio_text(slower)} the time of the best)",
            )
        shipped = paired_ratio(per_rep["as shipped"], per_rep[best])
        result.add(f"{workload}: as shipped ÷ best ({best})", ratio_text(shipped), "≤ 1.15×", shipped <= 1.15)
        print(f"  {workload}:", flush=True)
        print_table(("configuration", "median", "time ÷ best"), table)
    result.note(
        f"each configuration a fresh process of the real entry point, {reps} alternating rounds; "
        f"1-minute load average during the runs {min(load_seen):.1f}–{max(load_seen):.1f}"
    )
    return result


def memory_setup(
    opts: Options, variant: str
) -> Callable[[], object]:  # no memory probes: the children are the measurement
    raise NotImplementedError
