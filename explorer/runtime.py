"""Process-wide runtime settings, chosen by the entry points (the command line, the app), never on import.

The OpenMP runtime under torch reads OMP_WAIT_POLICY and OMP_NUM_THREADS once, when torch loads, so an
entry point calls `configure_for(workload)` before anything imports torch. What each workload gets was
measured by `python -m benchmarks --only threads`, which runs the real entry points (`explorer translate`
on Multi30k test2016, the app's translate-with-all-maps call) in fresh processes under each setting
(benchmarks/RESULTS.md):

- On a machine with cores to spare, threads that spin while they wait (ACTIVE) translate test2016 with
  `explorer translate` 1.6× faster than sleeping ones (PASSIVE): 8.0 s against 13.0 s (issue 13).
- On an oversubscribed machine (more runnable processes than cores: a training run, tests, other users)
  it is the other way round, and by more: spinning threads steal the cores the work needs. With the
  1-minute load average at 14–22 on 2 cores, `explorer translate --beam 4` on 50 sentences took 39 s with
  PASSIVE, 123 s with ACTIVE and 167 s with the OpenMP default.
So the command line picks the policy from the load when it starts. The app serves one sentence at a time
per request and runs requests side by side (`explorer.serving`), so it uses one OpenMP thread per request:
no thread team, nothing to spin, the same on a quiet and a busy machine.

A variable the user has set is never overridden; with EXPLORER_RUNTIME=as-given nothing is set at all
(the OpenMP runtime's own defaults; the benchmark uses it).
"""

from __future__ import annotations

import os
import sys
import warnings

OPT_OUT_VARIABLE, OPT_OUT_VALUE = "EXPLORER_RUNTIME", "as-given"
WORKLOADS = ("cli", "app")
# At or above this 1-minute load average per core, spinning OpenMP threads only steal cores.
BUSY_LOAD_PER_CORE = 1.0


def load_per_core() -> float:
    """1-minute load average ÷ logical cores (0.0 where the platform has no load average)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 0.0


def settings_for(workload: str, load: float) -> dict[str, str]:
    """The environment `workload` runs fastest with at `load` (1-minute load average per core)."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}; expected one of {WORKLOADS}")
    if workload == "app":
        return {"OMP_NUM_THREADS": "1"}
    return {"OMP_WAIT_POLICY": "PASSIVE" if load >= BUSY_LOAD_PER_CORE else "ACTIVE"}


def configure_for(workload: str) -> dict[str, str]:
    """Set the measured settings of `workload` ("cli" or "app") where the user has not; returns those set.

    Call it before torch is imported: the OpenMP runtime reads these variables only once, when it loads.
    """
    chosen = settings_for(workload, load_per_core())
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
    return applied
