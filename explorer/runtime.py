"""Process-wide runtime settings, chosen by the entry points (the command line, the app), never on import.

The OpenMP runtime under torch reads OMP_WAIT_POLICY and OMP_NUM_THREADS once, when torch loads, so an
entry point calls `configure_for(workload)` before anything imports torch. What each workload gets was
measured by `python -m benchmarks --only threads`, which runs the real entry points (`explorer translate`
on Multi30k test2016, the app's translate-with-all-maps call) in fresh processes under each setting
(benchmarks/RESULTS.md):

- On a machine with cores to spare, threads that spin while they wait (ACTIVE) translate test2016 with
  `explorer translate` 1.6× faster than sleeping ones (PASSIVE): 8.0 s against 13.0 s.
- On an oversubscribed machine (more runnable processes than cores: a training run, tests, other users)
  it is the other way round, and by more: spinning threads steal the cores the work needs. With the
  1-minute load average at 14–22 on 2 cores, `explorer translate --beam 4` on 50 sentences took 39 s with
  PASSIVE, 123 s with ACTIVE and 167 s with the OpenMP default.
So the command line picks the policy from the load when it starts (`load_per_core`: the load average and
the tasks runnable at that moment must both say busy). The app batches concurrent requests into one forward
pass (`explorer.serving`). On a busy machine it runs one OpenMP thread per request: no thread team, nothing
to spin. On a quiet one it keeps the OpenMP defaults (a thread per core, spinning briefly, then sleeping):
a decoding step's products are split over both cores (by oneDNN on the AMD EPYC, by MKL on the Intel Xeon),
and one thread was 1.19x slower for a single translation with all maps on the first (43.1 vs 36.2 ms) and
1.51x on the second (25.3 vs 16.8 ms); the classroom's batched burst of 40 was slower too (p95 0.48 vs
0.41 s) (benchmarks/RESULTS.md).

A variable the user has set is never overridden; with EXPLORER_RUNTIME=as-given nothing is set at all
(the OpenMP runtime's own defaults; the benchmark uses it).

Both entry points also keep glibc's malloc from handing memory back to the system after every beam-search step
(`configure_allocator`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import statistics
import sys
import time
import warnings

OPT_OUT_VARIABLE, OPT_OUT_VALUE = "EXPLORER_RUNTIME", "as-given"
WORKLOADS = ("cli", "app")
# At or above this many busy cores per core, spinning OpenMP threads only steal cores.
BUSY_LOAD_PER_CORE = 1.0
_RUNNABLE_SAMPLES, _RUNNABLE_INTERVAL_S = 5, 0.002


def runnable_per_core() -> float | None:
    """Other tasks runnable right now ÷ logical cores: the median of a few reads of /proc/stat's
    `procs_running`, less this process. None where there is no /proc/stat."""
    counts = []
    for i in range(_RUNNABLE_SAMPLES):
        try:
            with open("/proc/stat", encoding="ascii") as stat:
                line = next((row for row in stat if row.startswith("procs_running ")), None)
        except OSError:
            return None
        if line is None:
            return None
        counts.append(max(0, int(line.split()[1]) - 1))
        if i + 1 < _RUNNABLE_SAMPLES:
            time.sleep(_RUNNABLE_INTERVAL_S)
    return statistics.median(counts) / (os.cpu_count() or 1)


def load_per_core() -> float:
    """How busy the cores are when an entry point starts, per core: the smaller of the 1-minute load average
    and the tasks runnable right now (0.0 where the platform has neither).

    Both must say busy. The load average alone lags by a minute: a user's own previous command, or the
    previous configuration of a benchmark, leaves it high on an idle machine, and the next command then picked
    PASSIVE and ran 1.2× slower (quiet machine, `python -m benchmarks --only threads`). The
    runnable count alone would follow a momentary blip.
    """
    try:
        average = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        average = None
    now = runnable_per_core()
    known = [v for v in (average, now) if v is not None]
    return min(known) if known else 0.0


LAST_LOAD: list[float] = []  # the load `configure_for` decided by, for tests and benchmarks to read back


def settings_for(workload: str, load: float) -> dict[str, str]:
    """The environment `workload` runs fastest with at `load` (1-minute load average per core)."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}; expected one of {WORKLOADS}")
    if workload == "app":
        return {"OMP_NUM_THREADS": "1"} if load >= BUSY_LOAD_PER_CORE else {}
    return {"OMP_WAIT_POLICY": "PASSIVE" if load >= BUSY_LOAD_PER_CORE else "ACTIVE"}


# glibc's malloc gives the free memory at the top of its heap back to the system once more than M_TRIM_THRESHOLD is
# free there. By default that threshold follows the largest block freed (twice its size), and a beam search over a
# batch frees its self-attention cache, 12-25 MiB, at every step (`PackedCache.select` copies it reordered): the
# heap shrank and grew again every few steps, and each page it touched again was a page fault. Beam 4 over
# batches of 32 took 229-245 minor page faults a sentence; with the thresholds fixed as below, 14-21 (greedy: about
# one either way), and the process's peak memory is unchanged (`python -m benchmarks.probes.allocator`,
# benchmarks/JOURNAL.md).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
ALLOCATOR = {_M_MMAP_THRESHOLD: 32 << 20, _M_TRIM_THRESHOLD: 64 << 20}
# glibc reads these at start-up; a user who set one has chosen, and nothing is changed.
_ALLOCATOR_VARIABLES = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")


def configure_allocator() -> bool:
    """Fix glibc malloc's trim and mmap thresholds (`ALLOCATOR`) for this process; True where they were set.

    Nothing happens on another C library (no `mallopt`), where the user set malloc's own variables, or with
    EXPLORER_RUNTIME=as-given. Any time in a process's life will do: malloc reads them on every free.
    """
    if os.environ.get(OPT_OUT_VARIABLE) == OPT_OUT_VALUE or any(v in os.environ for v in _ALLOCATOR_VARIABLES):
        return False
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name and "libc" in name else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        return False
    return all(mallopt(parameter, value) == 1 for parameter, value in ALLOCATOR.items())


def configure_for(workload: str) -> dict[str, str]:
    """Set the measured settings of `workload` ("cli" or "app") where the user has not; returns those set.

    Call it before torch is imported: the OpenMP runtime reads these variables only once, when it loads.
    """
    load = load_per_core()
    LAST_LOAD[:] = [load]
    chosen = settings_for(workload, load)
    if os.environ.get(OPT_OUT_VARIABLE) == OPT_OUT_VALUE:
        return {}
    applied = {name: value for name, value in chosen.items() if name not in os.environ}
    if applied and "torch" in sys.modules:
        warnings.warn(
            f"configure_for({workload!r}) called after torch was imported: {sorted(applied)} "
            "take effect only in processes that set them before torch loads",
            stacklevel=2,
        )
    os.environ.update(applied)
    configure_allocator()
    return applied
