"""Benchmarks of the engine: scripts that print tables and ratios, not timed pass/fail tests.

`python -m benchmarks` runs them all (see benchmarks/__main__.py); each module has `run(Options) -> Result`
and `memory_setup(Options, variant)` for its peak-memory probes.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import explorer  # noqa: F401  (before torch, so the engine's CPU threading defaults apply as in the app)

# Run order of `python -m benchmarks`.
BENCHMARKS = {
    "training": "benchmarks.training",
    "attention": "benchmarks.attention",
    "decoding": "benchmarks.decoding",
    "latency": "benchmarks.latency",
    "threads": "benchmarks.threads",
    "gpu": "benchmarks.gpu",
}


def load(name: str) -> ModuleType:
    return importlib.import_module(BENCHMARKS[name])
