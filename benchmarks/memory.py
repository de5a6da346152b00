"""Peak memory of one benchmark variant, each measured in a fresh `python -m benchmarks --memory-child` process."""

from __future__ import annotations

import gc
import json
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.common import REPO_ROOT, Options, Result, synchronize


def max_rss_bytes() -> int:
    """This process's peak resident set size (Linux reports KiB, macOS bytes).

    Caveat on Linux: getrusage's maxrss survives fork+exec, so a child started from a big parent begins
    with the parent's peak; `_proc_status` (VmHWM, per address space) does not.
    """
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _proc_status(field_name: str) -> int | None:
    """A size field of /proc/self/status (VmRSS, VmHWM) in bytes, or None off Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0: write 5 to /proc/self/clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def measure_memory(setup: Callable[[], Callable[[], Any]], device: str, repeats: int = 3) -> dict[str, float]:
    """Run in a fresh process: `setup()` builds the workload and returns it; the workload runs `repeats` times.

    CPU: the process's peak RSS while the workload runs and its growth over the RSS after setup (model and
    data loaded). On Linux the peak is VmHWM, reset after setup so setup's transients do not mask it;
    elsewhere getrusage's maxrss (a high-water mark for the whole process). CUDA: torch's peak allocation.
    """
    work = setup()
    gc.collect()
    if device.startswith("cuda"):
        synchronize(device)
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        for _ in range(repeats):
            work()
        synchronize(device)
        peak = torch.cuda.max_memory_allocated()
        return {"peak_bytes": float(peak), "delta_bytes": float(peak - base)}
    if _reset_peak_rss() and _proc_status("VmRSS") is not None:
        base = _proc_status("VmRSS") or 0
        for _ in range(repeats):
            work()
        peak = _proc_status("VmHWM") or 0
    else:
        base = max_rss_bytes()
        for _ in range(repeats):
            work()
        peak = max_rss_bytes()
    return {"peak_bytes": float(peak), "delta_bytes": float(max(peak - base, 0))}


def memory_in_subprocess(benchmark: str, variant: str, opts: Options, timeout: float = 600) -> dict[str, float] | None:
    """Peak memory of one variant of one benchmark, measured in a fresh `python -m benchmarks` child."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "memory.json"
        command = [
            sys.executable,
            "-m",
            "benchmarks",
            "--memory-child",
            benchmark,
            variant,
            "--child-options",
            opts.to_json(),
            "--child-out",
            str(out),
        ]
        try:
            done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"    memory probe {benchmark}/{variant} timed out after {timeout:.0f} s", flush=True)
            return None
        if done.returncode != 0 or not out.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            print(f"    memory probe {benchmark}/{variant} failed: {' | '.join(tail)}", flush=True)
            return None
        return json.loads(out.read_text())


def memory_rows(
    result: Result, benchmark: str, variants: Sequence[str], opts: Options, labels: dict[str, str] | None = None
) -> None:
    """Add one 'peak memory' row per variant (each probed in its own process)."""
    for variant in variants:
        measured = memory_in_subprocess(benchmark, variant, opts)
        label = (labels or {}).get(variant, variant)
        if measured is None:
            result.add(f"peak memory, {label}", "n/a (probe failed)")
            continue
        kind = "GPU peak allocated" if opts.device.startswith("cuda") else "peak RSS"
        value = (
            f"{measured['peak_bytes'] / 2**20:.0f} MiB {kind} (+{measured['delta_bytes'] / 2**20:.0f} MiB over setup)"
        )
        result.add(f"peak memory, {label}", value)
        print(f"    peak memory, {label}: {value}", flush=True)
