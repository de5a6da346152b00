"""Process-wide runtime settings, chosen by the entry points (the command line, the app), never on import.

The OpenMP runtime under torch reads OMP_WAIT_POLICY and OMP_NUM_THREADS once, when torch loads, so an
entry point calls `configure_for(workload)` before anything imports torch. What each workload gets was
measured by `python -m benchmarks --only entrypoints`, which runs the real entry points (`explorer translate`
on Multi30k test2016, the app's translate-with-all-maps function) in fresh processes under each setting;
figures in benchmarks/RESULTS.md. A variable the user has set is never overridden, and with
EXPLORER_RUNTIME=as-given nothing is set at all (the OpenMP runtime's own defaults; the benchmark uses it).
"""

from __future__ import annotations

import os
import sys
import warnings

OPT_OUT_VARIABLE, OPT_OUT_VALUE = "EXPLORER_RUNTIME", "as-given"

# workload -> environment it runs fastest with (see the module doc for how it was chosen).
SETTINGS: dict[str, dict[str, str]] = {
    "cli": {"OMP_WAIT_POLICY": "ACTIVE"},
    "app": {"OMP_WAIT_POLICY": "ACTIVE"},
}


def configure_for(workload: str) -> dict[str, str]:
    """Set the measured settings of `workload` ("cli" or "app") where the user has not; returns those set.

    Call it before torch is imported: the OpenMP runtime reads these variables only once, when it loads.
    """
    if workload not in SETTINGS:
        raise ValueError(f"unknown workload {workload!r}; expected one of {sorted(SETTINGS)}")
    if os.environ.get(OPT_OUT_VARIABLE) == OPT_OUT_VALUE:
        return {}
    applied = {name: value for name, value in SETTINGS[workload].items() if name not in os.environ}
    if applied and "torch" in sys.modules:
        warnings.warn(f"configure_for({workload!r}) called after torch was imported: {sorted(applied)} "
                      "take effect only in processes that set them before torch loads", stacklevel=2)
    os.environ.update(applied)
    return applied
