"""CPU threading: torch's thread count and the OpenMP wait policy, for one-sentence latency and a training step.

The OpenMP runtime reads OMP_WAIT_POLICY once, when torch loads, so the policies cannot be compared inside one
process. Each configuration runs in its own child process instead, and the children alternate (A B C, then
C B A, …) so that background load hits them alike; the ratios compare medians of the same workload.

Configurations: torch's default thread count with the OpenMP runtime's default policy (threads spin a while
before sleeping), the same with OMP_WAIT_POLICY=PASSIVE (explorer's default since it is imported before torch),
and a single thread (no OpenMP team at all).

The latency is also measured beside a competing torch process (many small multi-threaded ops, the OpenMP
defaults: another app session, a test run, a notebook), which is where spinning threads hurt most.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import REPO_ROOT, Options, Result, paired_ratio, percentile, print_table, ratio_text

NAME = "threads"
TITLE = "CPU threads and OpenMP wait policy"
CONFIGS = {  # name -> (OMP_WAIT_POLICY or None for the runtime's default, torch threads or None for default)
    "default threads, OpenMP default wait": (None, None),
    "default threads, OMP_WAIT_POLICY=PASSIVE": ("PASSIVE", None),
    "1 thread": (None, 1),
}
WORKLOADS = ("latency", "latency beside another torch process", "training")
COMPETITOR = """
import torch
x = [torch.randn(65536) for _ in range(16)]
a = torch.randn(256, 256)
while True:
    for t in x:
        t.mul_(0.999).add_(0.001)
    a = torch.tanh(a @ a)
"""


def _child_env(policy: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    return env


def child(workload: str, opts: Options, out: str) -> None:
    """Runs in the child: torch is imported first, so the policy comes from the environment alone."""
    import torch  # noqa: F401  (before explorer: explorer's own default must not decide here)

    from benchmarks.common import timed

    if workload == "latency":
        from benchmarks import latency
        fns, _ = latency._variants(opts)
        work, calls, warmup = fns["greedy + attention"], (5 if opts.quick else 20), 2
    else:
        from benchmarks import training
        s = training.setup(opts, 6)
        step = training.step_functions(s, opts.seed, only="explorer")["explorer"]
        batches = iter(s.batches * 10)
        work, calls, warmup = (lambda: step(next(batches))), (2 if opts.quick else 4), 1
    for _ in range(warmup):
        work()
    times = [timed(work, opts.device)[0] for _ in range(calls)]
    Path(out).write_text(json.dumps({"times": times, "threads": torch.get_num_threads(),
                                     "policy": os.environ.get("OMP_WAIT_POLICY", "")}))


def _run_child(workload: str, config: str, opts: Options) -> dict | None:
    if workload.startswith("latency beside"):
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        competitor = subprocess.Popen([sys.executable, "-c", COMPETITOR], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        try:
            return _run_child("latency", config, opts)
        finally:
            competitor.kill()
            competitor.wait()
    policy, threads = CONFIGS[config]
    child_opts = Options(**{**json.loads(opts.to_json()), "threads": threads, "memory": False})
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "times.json"
        command = [sys.executable, "-m", "benchmarks", "--threads-child", workload, "--child-options",
                   child_opts.to_json(), "--child-out", str(out)]
        try:
            done = subprocess.run(command, cwd=REPO_ROOT, env=_child_env(policy), capture_output=True, text=True,
                                  timeout=900)
        except subprocess.TimeoutExpired:
            print(f"    {workload} / {config}: timed out", flush=True)
            return None
        if done.returncode != 0 or not out.is_file():
            print(f"    {workload} / {config} failed: {(done.stderr or done.stdout).strip()[-300:]}", flush=True)
            return None
        return json.loads(out.read_text())


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    if opts.device.startswith("cuda"):
        result.skipped = "CPU only"
        return result
    if opts.threads == 1:
        result.skipped = "--threads 1 leaves nothing to compare"
        return result
    reps = 1 if opts.quick else 3
    names = list(CONFIGS)
    for workload in (WORKLOADS[:1] if opts.quick else WORKLOADS):
        per_config: dict[str, list[float]] = {name: [] for name in names}
        per_rep: dict[str, list[float]] = {name: [] for name in names}
        threads_seen = {}
        for rep in range(reps):
            for name in (names if rep % 2 == 0 else names[::-1]):
                measured = _run_child(workload, name, opts)
                if measured is None:
                    continue
                per_config[name] += measured["times"]
                per_rep[name].append(statistics.median(measured["times"]))
                threads_seen[name] = measured["threads"]
                print(f"    {workload}, run {rep + 1}/{reps}, {name}: median "
                      f"{statistics.median(measured['times']) * 1e3:.1f} ms", flush=True)
        if not all(per_config.values()):
            result.add(f"{workload}", "n/a (a child process failed)")
            continue
        baseline = names[0]
        table = []
        for name in names:
            t = per_config[name]
            speedup = paired_ratio(per_rep[baseline], per_rep[name])
            table.append((name, threads_seen[name], f"{statistics.median(t) * 1e3:.1f} ms",
                          f"{percentile(t, 95) * 1e3:.1f} ms", ratio_text(speedup)))
            label = ("training step (explorer)" if workload == "training" else
                     "one-sentence translate + attention" + (" beside another torch process"
                                                             if workload != "latency" else ""))
            result.add(f"{label}, {name}: median", f"{statistics.median(t) * 1e3:.1f} ms"
                       + ("" if name == baseline else f" ({ratio_text(speedup)} the speed of the first)"))
        print(f"  {workload}:", flush=True)
        print_table(("configuration", "threads", "median", "p95", "speed vs first"), table)
    result.note("each configuration in its own process (the wait policy is fixed when torch loads), "
                f"{reps} alternating runs each; the speed ratio is the median over runs of first ÷ this")
    return result


def memory_setup(opts: Options, variant: str):  # no memory probes: the children are the measurement
    raise NotImplementedError
