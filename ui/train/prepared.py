"""Waiting on a large upload's preparation (explorer.data.prepare), which runs in a process of its own.

The page shows a progress bar while the step works and returns its final state. Streamlit stops this script at
the next update when the browser goes away; the step goes on regardless, and a session that comes back with the
same files finds it done (or still going) under the same job.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from explorer.data.prepare import StepState, step_state
from ui.i18n import t

POLL_S = 0.25


def stage_name(stage: str) -> str:
    """What the step is doing, in the page's language (a stage this list does not know: its own name)."""
    names = dict(
        starting=t("starting a process of its own"),
        reading=t("reading the files"),
        checking=t("checking every line"),
        writing=t("writing the sentence pairs"),
        training=t("training the vocabulary"),
    )
    return names.get(stage, stage)


def wait_for(job: Path, step: str, label: str) -> StepState:
    """Block this script run (not the server) until the job's step ends, with a progress bar saying what it does."""
    bar = None
    while (state := step_state(job, step)).running:
        text = t(
            "{label} ({stage}, {seconds} s, outside the server)",
            label=label,
            stage=stage_name(state.stage),
            seconds=f"{max(0.0, time.time() - state.started):.0f}",
        )
        if bar is None:
            bar = st.progress(state.progress, text=text)
        else:
            bar.progress(state.progress, text=text)
        time.sleep(POLL_S)
    if bar is not None:
        bar.empty()
    return state
