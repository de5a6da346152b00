"""The train page's handle on training runs: the `RunManager` over the runs folder and the folders runs and
saved models go to, shared by the setup sections (ui/train/start.py, ui/train/estimate.py) and the live view
(ui/train/watch.py).

Every run trains in its own process (explorer.training.worker) and reports only through its run folder, so
a rerun, a page switch, a reload, a second browser or a restarted server only changes what is drawn, never
which runs exist; the manager keeps no state and is cheap to make on every call.
"""

from __future__ import annotations

import os
from pathlib import Path

import ui.model_picker as app_state
from explorer.training.launcher import DEFAULT_MAX_JOBS, RunManager
from ui.i18n import t

RUNS_ENV, MAX_JOBS_ENV = "EXPLORER_RUNS", "EXPLORER_MAX_JOBS"


def runs_root() -> Path:
    """Where run directories go: $EXPLORER_RUNS, else runs/app/ in the repository."""
    return Path(os.environ.get(RUNS_ENV) or app_state.REPO_ROOT / "runs" / "app")


def manager() -> RunManager:
    """The runs under `runs_root()`, at most $EXPLORER_MAX_JOBS (default 2) training at once."""
    return RunManager(runs_root(), max_jobs=int(os.environ.get(MAX_JOBS_ENV, DEFAULT_MAX_JOBS)))


def checkpoint_target(name: str) -> Path:
    """Where a run named `name` is saved: the folder every page's checkpoint picker lists."""
    return app_state.checkpoint_root() / name


def duration(seconds: float) -> str:
    """A time span as a person says it: "45 s", "3 min 05 s", "2 h 10 min"."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return t("{s} s", s=seconds)
    if seconds < 3600:
        return t("{m} min {s} s", m=seconds // 60, s=f"{seconds % 60:02d}")
    return t("{h} h {m} min", h=seconds // 3600, m=f"{seconds % 3600 // 60:02d}")
