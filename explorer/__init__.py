"""Attention Explorer engine: a paper-faithful Transformer ("Attention Is All You Need", Vaswani et al. 2017)
whose attention comes back as data. Never imports streamlit."""

import os as _os
import sys as _sys

# OpenMP threads that spin while they wait for work steal the CPU from every other process on a busy machine
# (a training run beside the app, a lecture laptop): on a loaded 2-core machine, translating one sentence took
# ~1.4 s with torch's default wait policy and ~0.06 s with PASSIVE (benchmarks/threads.py measures it).
# The OpenMP runtime reads this once, when torch loads, so it only applies when explorer is imported first
# (the CLI and the app do); set OMP_WAIT_POLICY yourself to choose otherwise.
if "torch" not in _sys.modules:
    _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
