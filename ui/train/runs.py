"""The train page's handle on training runs: the `RunManager` over the runs folder and the folders runs and
saved models go to, shared by the setup sections (ui/train/start.py, ui/train/estimate.py) and the live view
(ui/train/watch.py).

Every run trains in its own process (explorer.training.worker) and reports only through its run folder, so
a rerun, a page switch, a reload, a second browser or a restarted server only changes what is drawn, never
which runs exist; the manager keeps no state and is cheap to make on every call.

On a shared server (`shared_server`) a run is controlled only by the browser session that started it (its
`session_owner` token is the run's owner) and by the `explorer` command; other sessions watch it read-only.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import streamlit as st

import ui.model_picker as app_state
from explorer.training.launcher import DEFAULT_MAX_JOBS, RunManager
from ui.i18n import t

RUNS_ENV, MAX_JOBS_ENV, SHARED_ENV = "EXPLORER_RUNS", "EXPLORER_MAX_JOBS", "EXPLORER_SHARED"
LOCAL_ADDRESSES = ("", "localhost", "127.0.0.1", "::1")
OWNER_KEY = "train_owner"


def runs_root() -> Path:
    """Where run directories go: $EXPLORER_RUNS, else runs/app/ in the repository."""
    return Path(os.environ.get(RUNS_ENV) or app_state.REPO_ROOT / "runs" / "app")


def shared_server() -> bool:
    """Whether this server is shared (a class on one machine): $EXPLORER_SHARED=1 says yes, 0 says no; unset,
    it is when the server was told to listen on an address other than the machine's own name for itself
    (`python app.py --server.address 0.0.0.0`). One person's `python app.py` is single-user."""
    value = os.environ.get(SHARED_ENV, "").strip().lower()
    if value:
        return value not in ("0", "no", "false", "off")
    return str(st.get_option("server.address") or "") not in LOCAL_ADDRESSES


def session_owner() -> str:
    """This browser session's owner token (random, made once per session): the owner of the runs it starts."""
    if OWNER_KEY not in st.session_state:
        st.session_state[OWNER_KEY] = secrets.token_hex(16)
    return str(st.session_state[OWNER_KEY])


def manager() -> RunManager:
    """The runs under `runs_root()`, at most $EXPLORER_MAX_JOBS (default 2) training at once; each controlled
    only by its owner on a shared server."""
    return RunManager(runs_root(), max_jobs=int(os.environ.get(MAX_JOBS_ENV, DEFAULT_MAX_JOBS)), shared=shared_server())


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
