"""Benchmarks of the engine: scripts that print tables and ratios, not timed pass/fail tests.

`python -m benchmarks` runs them all (see benchmarks/__main__.py); each module has `run(Options) -> Result`
and `memory_setup(Options, variant)` for its peak-memory probes. Standalone investigations are in
`benchmarks/probes/`. Importing the package sets nothing: each command chooses its runtime settings itself.
"""

from __future__ import annotations

import importlib
from types import ModuleType

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
    "room": "benchmarks.room",
    "classroom": "benchmarks.classroom",
    "explain": "benchmarks.explain",
    "browser": "benchmarks.browser_pages",
    "marian": "benchmarks.marian",
}


def command_line_runtime(module_name: str) -> None:
    """Run as a command (`module_name == "__main__"`), a benchmark gets the command line's measured runtime settings
    (`explorer.runtime.configure_for("cli")`), as `python -m benchmarks` does; imported (by a test), nothing."""
    if module_name == "__main__":
        from explorer.runtime import configure_for

        configure_for("cli")


def load(name: str) -> ModuleType:
    return importlib.import_module(BENCHMARKS[name])
