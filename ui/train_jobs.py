"""The train page's handle on training jobs: the one `JobManager` of this process and the folders its runs
and saved models go to, shared by the setup form (ui/train_setup.py) and the live view (ui/train_live.py).

Training runs in `explorer.training.jobs.JobManager`, held here with `st.cache_resource`, so a rerun, a page
switch, a reload or a second browser only changes what is drawn, never which runs exist.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

import ui.state as app_state
from explorer.training.jobs import DEFAULT_MAX_JOBS, JobManager

RUNS_ENV, MAX_JOBS_ENV = "EXPLORER_RUNS", "EXPLORER_MAX_JOBS"


@st.cache_resource
def job_manager(max_jobs: int) -> JobManager:
    """The one JobManager of this process, shared by every browser session."""
    return JobManager(max_jobs)


def manager() -> JobManager:
    """The process's JobManager, bounded to $EXPLORER_MAX_JOBS concurrent runs (default 2)."""
    return job_manager(int(os.environ.get(MAX_JOBS_ENV, DEFAULT_MAX_JOBS)))


def runs_root() -> Path:
    """Where run directories go: $EXPLORER_RUNS, else runs/app/ in the repository."""
    return Path(os.environ.get(RUNS_ENV) or app_state.REPO_ROOT / "runs" / "app")


def checkpoint_target(name: str) -> Path:
    """Where a run named `name` is saved: the folder every page's checkpoint picker lists."""
    return app_state.checkpoint_root() / name


def duration(seconds: float) -> str:
    """A time span as a person says it: "45 s", "3 min 05 s", "2 h 10 min"."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"

