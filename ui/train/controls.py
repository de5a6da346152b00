"""The live view's buttons: stop or save a training run; resume, save or discard one that ended."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer.training.launcher import CLI_OWNER, JobError, RunManager, RunSnapshot
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.train.runs import checkpoint_target, session_owner


def controls(jobs: RunManager, snap: RunSnapshot) -> None:
    """Stop or save a training run; resume, save or discard one that ended.

    Every button acts in its `on_click` callback, which runs before the page is drawn again, so the redraw
    shows the new state. Stop and save are files in the run folder, so they work from any browser session
    that may act on the run: any on one person's machine; on a shared server only the one that started it
    (the others see the buttons disabled, and a caption says who may act).
    """
    name = snap.name
    locked = not jobs.may_act(snap, session_owner())
    if locked:
        st.caption(
            t(
                "Started from the command line: on this shared server only the `explorer` command can stop, "
                "resume, save or discard it. You can watch it."
            )
            if snap.owner == CLI_OWNER
            else t(
                "Started in another browser session: on this shared server only that session (or the `explorer` "
                "command on the server) can stop, resume, save or discard it. You can watch it."
            ),
        )
    row = st.container(horizontal=True, vertical_alignment="bottom")
    (live_controls if snap.live else ended_controls)(row, jobs, snap, locked)
    error = st.session_state.pop(f"train_control_error_{name}", None)
    if error:
        st.error(error, icon=":material/error:")


def live_controls(row: DeltaGenerator, jobs: RunManager, snap: RunSnapshot, locked: bool) -> None:
    """Stop, and save a copy now (after the current step)."""
    name = snap.name
    row.button(
        t("Stop"),
        icon=":material/stop:",
        key=f"train_stop_{name}",
        disabled=locked or snap.status == "stopping",
        help=t("Stops after the current step and saves latest/, so it can be resumed."),
        on_click=stop_run,
        args=(jobs, name),
    )
    row.button(
        t("Save a copy now"),
        icon=":material/save:",
        key=f"train_save_now_{name}",
        disabled=locked,
        help=t("Saves the model as checkpoint {name}.", name=shown_value(name)),
        on_click=save_while_training,
        args=(jobs, name),
    )
    if st.session_state.pop(f"train_saving_{name}", False):
        st.toast(t("Saving {name} after the current step…", name=shown_value(name)), icon=":material/save:")


def ended_controls(row: DeltaGenerator, jobs: RunManager, snap: RunSnapshot, locked: bool) -> None:
    """Resume (or start again), save as a checkpoint, discard."""
    name = snap.name
    if snap.checkpoint_step is not None or snap.status in ("crashed", "failed"):
        start = snap.checkpoint_step or 0  # a run that died before its first checkpoint starts again from 0
        until = snap.total_steps if start < snap.total_steps else start + max(snap.total_steps // 2, 100)
        steps_key = f"train_resume_steps_{name}"
        row.button(
            t("Resume") if snap.checkpoint_step is not None else t("Start again"),
            icon=":material/play_arrow:",
            key=f"train_resume_{name}",
            type="primary",
            disabled=locked,
            help=t("Continue from the last saved step ({step}) up to the step on the right.", step=f"{start:,}"),
            on_click=resume_run,
            args=(jobs, name, steps_key),
        )
        row.number_input(
            t("until step"),
            start + 1,
            10_000_000,
            value=until,
            width=180,
            key=steps_key,
            disabled=locked,
            help=t("The total number of steps after resuming."),
        )
    if snap.checkpoint_step is not None:
        row.button(
            t("Save as checkpoint"),
            icon=":material/save:",
            key=f"train_save_{name}",
            disabled=locked,
            help=t(
                "Saves step {step} as checkpoint {name}, listed in every page's picker.",
                step=f"{snap.checkpoint_step:,}",
                name=shown_value(name),
            ),
            on_click=save_stopped_run,
            args=(jobs, name),
        )
    with row.popover(t("Discard run"), icon=":material/delete:", disabled=locked):
        st.markdown(
            t(
                "Delete the run folder `{folder}` (its periodic checkpoints). Checkpoints saved to the list stay.",
                folder=snap.run_dir.name,
            )
        )
        st.button(
            t("Delete"),
            key=f"train_discard_{name}",
            type="primary",
            disabled=locked,
            on_click=discard_run,
            args=(jobs, name),
        )


def stop_run(jobs: RunManager, name: str) -> None:
    try:
        jobs.stop(name, by=session_owner())  # a stop request in the run folder: the process stops after its step
    except JobError as error:
        st.session_state[f"train_control_error_{name}"] = t(
            "Not stopped: {error}", error=shown_value(error, ERROR_CHARS)
        )


def save_while_training(jobs: RunManager, name: str) -> None:
    if saved(jobs, name):  # queued: the training process saves after its current step
        st.session_state[f"train_saving_{name}"] = True


def save_stopped_run(jobs: RunManager, name: str) -> None:
    saved(jobs, name)


def saved(jobs: RunManager, name: str) -> bool:
    """Save the run as the checkpoint of its name (the next free name when that one is another run's);
    False, with the error kept for the redraw, when it cannot."""
    try:
        jobs.save(name, checkpoint_target(name), by=session_owner())
    except (JobError, OSError, ValueError) as error:
        st.session_state[f"train_control_error_{name}"] = t("Not saved: {error}", error=shown_value(error, ERROR_CHARS))
        return False
    return True


def resume_run(jobs: RunManager, name: str, steps_key: str) -> None:
    try:
        jobs.resume(name, steps=int(st.session_state[steps_key]), by=session_owner())
    except JobError as error:
        st.session_state[f"train_control_error_{name}"] = t(
            "Not resumed: {error}", error=shown_value(error, ERROR_CHARS)
        )


def discard_run(jobs: RunManager, name: str) -> None:
    """Delete the run folder (only one under the runs root)."""
    try:
        jobs.discard(name, by=session_owner())
    except JobError as error:
        st.session_state[f"train_control_error_{name}"] = shown_value(error, ERROR_CHARS)
        return
    st.session_state.pop("train_run", None)
    st.query_params.pop("train_run", None)  # or the next run would take the link's run, now gone, for a bad link
