"""Benchmarks of the engine: scripts that print tables and ratios, not timed pass/fail tests.

`python -m benchmarks` runs them all (see benchmarks/__main__.py); each module has `run(Options) -> Result`
and `memory_setup(Options, variant)` for its peak-memory probes.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from explorer.runtime import configure_for

# Before torch loads: the benchmarks run with the command line's measured settings (benchmarks/threads.py).
configure_for("cli")

# Run order of `python -m benchmarks`.
BENCHMARKS = {
    "training": "benchmarks.training",
    "attention": "benchmarks.attention",
    "decoding": "benchmarks.decoding",
    "latency": "benchmarks.latency",
    "threads": "benchmarks.threads",
    "head_mask": "benchmarks.head_mask",
    "switch_head": "benchmarks.switch_head",
    "while_training": "benchmarks.while_training",
    "gpu": "benchmarks.gpu",
}


def load(name: str) -> ModuleType:
    return importlib.import_module(BENCHMARKS[name])
