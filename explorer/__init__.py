"""Attention Explorer engine: a paper-faithful Transformer ("Attention Is All You Need", Vaswani et al. 2017)
whose attention comes back as data. Never imports streamlit."""

import os as _os
import sys as _sys

# OpenMP threads that spin while they wait for work stall everything on an oversubscribed machine (a training
# run, tests and the app sharing 2 cores): there, translating one sentence took a median 1.4 s (p95 3.5 s) with
# the OpenMP runtime's default wait policy and 0.06 s with PASSIVE; on a lightly loaded machine they are within
# ~5% (`python -m benchmarks --only threads` measures both). The runtime reads the policy once, when torch
# loads, so this only applies when explorer is imported first (the CLI and the app do); set OMP_WAIT_POLICY
# yourself to choose otherwise.
if "torch" not in _sys.modules:
    _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
