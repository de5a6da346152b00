"""The train page's live view: pick a run, watch its status, progress and remaining time, loss, learning rate,
BLEU and throughput; stop, resume or save it; and watch the cross-attention of its watched sentences form.

Each run trains in its own process and writes its progress into its run folder; the view is an
`st.fragment` that re-reads that folder every `REFRESH_S` seconds while the run trains, so only it redraws.
It reruns the whole page when the run starts, ends or saves a model (the sidebar then lists the new model).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import streamlit as st

from explorer.training.launcher import RunSnapshot, RunStatus
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.train.attention import attention_section
from ui.train.charts import charts
from ui.train.controls import controls
from ui.train.runs import duration, manager
from ui.urlstate import bound_choice

REFRESH_S = 1.5  # seconds between redraws of a running job


Colour = Literal["blue", "green", "orange", "red"]


def status_label(status: str) -> tuple[str, Colour, str]:
    """(label, badge colour, icon) of a run status."""
    labels: dict[str, tuple[str, Colour, str]] = {
        "preparing": (t("Preparing"), "blue", ":material/hourglass_top:"),
        "running": (t("Training"), "green", ":material/play_arrow:"),
        "stopping": (t("Stopping"), "orange", ":material/pause:"),
        "finished": (t("Finished"), "green", ":material/check_circle:"),
        "stopped": (t("Stopped"), "orange", ":material/pause_circle:"),
        "failed": (t("Failed"), "red", ":material/error:"),
        "crashed": (t("Crashed"), "red", ":material/heart_broken:"),
    }
    return labels[status]


def run_label(run: RunStatus) -> str:
    """One line per run in the picker: its name and status, with its step once it no longer moves.

    The picker is drawn outside the live view's fragment, so it is redrawn only when the page reruns (the view
    reruns it when the run's status changes, `page_signature`): a live run's step would be stale within a second.
    """
    label = status_label(run.status)[0]
    if run.live:
        return t("{name} ({status})", name=run.path.name, status=label.lower())
    text = t(
        "{name} ({status} at step {step} of {total})",
        name=run.path.name,
        status=label.lower(),
        step=f"{run.step:,}",
        total=f"{run.total_steps:,}",
    )
    if run.status == "crashed" and run.checkpoint_step is None:
        text += t(", before its first checkpoint")
    elif run.resumable and not run.finished:
        text += t(", can be resumed from step {step}", step=f"{run.checkpoint_step:,}")
    return text


def page_signature(snap: RunSnapshot) -> tuple[str, int]:
    """What the whole page shows of a run outside its live view: its status (in the picker) and its saved models
    (in the sidebar). When it changes, the live view reruns the page."""
    return snap.status, len(snap.saved)


def watch_section() -> None:
    jobs = manager()
    labels = {run.path.name: run_label(run) for run in jobs.runs()}
    if not labels:
        st.info(t("No training run yet: set one up under **New run**."), icon=":material/model_training:")
        return
    name = bound_choice(st.selectbox, t("Run"), tuple(labels), "train_run", next(iter(labels)), format_func=labels.get)
    snap = jobs.snapshot(name)
    if snap is None:
        st.error(t("Run {name} is gone from the runs folder.", name=shown_value(name)), icon=":material/error:")
        return
    signature = page_signature(snap)
    st.fragment(run_every=REFRESH_S if snap.live else None)(monitor)(name, signature)


def monitor(name: str, signature: tuple[str, int]) -> None:
    """The live view of one run; redrawn on its own every REFRESH_S seconds while the run trains."""
    jobs = manager()
    snap = jobs.snapshot(name)
    if snap is None or page_signature(snap) != signature:
        st.rerun()  # a new status, saved or removed: redraw the whole app (the picker, the sidebar's models)
    assert snap is not None
    status_block(snap)
    controls(jobs, snap)
    if not snap.history["step"]:
        if snap.live:
            st.info(t("Waiting for the first training steps…"), icon=":material/hourglass_top:")
        return
    charts(snap)
    attention_section(snap)


def status_block(snap: RunSnapshot) -> None:
    label, colour, icon = status_label(snap.status)
    st.badge(label, color=colour, icon=icon)
    parts = [
        t("step {step} of {total}", step=f"{snap.step:,}", total=f"{snap.total_steps:,}"),
        t("{time} of training", time=duration(snap.elapsed_s)),
    ]
    eta = snap.eta_s()
    if eta is not None:
        parts.append(t("about {time} left", time=duration(eta)))
    st.progress(snap.progress, text=" · ".join(parts))
    if snap.status == "crashed":
        where = (
            t("It can be resumed from its last checkpoint, step {step}.", step=f"{snap.checkpoint_step:,}")
            if snap.checkpoint_step is not None
            else t("It died before its first checkpoint: start it again.")
        )
        st.error(
            t(
                "The training process crashed at step {step}: {error}.",
                step=f"{snap.step:,}",
                error=shown_value(snap.error or "", ERROR_CHARS),
            )
            + " "
            + where,
            icon=":material/heart_broken:",
        )
    elif snap.status == "failed":
        st.error(
            t("The run failed: {error}", error=shown_value(snap.error or "", ERROR_CHARS)), icon=":material/error:"
        )
    if snap.log:
        st.caption(t("The last lines of its log:"))
        st.code(snap.log, language=None)
    history = snap.history
    cols = st.columns(4)
    if history["loss"]:
        first = history["loss"][0]
        cols[0].metric(
            t("Training loss"),
            f"{history['loss'][-1]:.3f}",
            f"{history['loss'][-1] - first:+.3f}",
            delta_color="inverse",
            delta_description=t("since step {step}", step=f"{history['step'][0]:,}"),
            help=t("Label-smoothed cross-entropy per target token (nats)."),
        )
    val_loss = [v for v in history["val_loss"] if v is not None and not math.isnan(v)]
    cols[1].metric(
        t("Validation loss"),
        f"{val_loss[-1]:.3f}" if val_loss else "—",
        help=t("Cross-entropy per token on held-out pairs, without smoothing."),
    )
    bleu = [b for b in history["val_bleu"] if b is not None]
    cols[2].metric(t("Validation BLEU"), f"{bleu[-1]:.1f}" if bleu else "—", help=t("sacreBLEU, greedy decoding."))
    rate = snap.tokens_per_s
    cols[3].metric(t("Tokens / s"), f"{rate:,.0f}" if rate else "—", help=t("Target tokens per second of training."))
    for path, step in snap.saved:
        message = t(
            "Saved at step {step} as checkpoint **{name}**: pick it in the sidebar on any page.",
            step=f"{step:,}",
            name=Path(path).name,
        )
        if Path(path).name != snap.name:  # the run's own name held another run's checkpoint (saving.claim_target)
            message += " " + t(
                "A checkpoint named {name} was there already, made by another run: it was kept, and this "
                "model took the next free name.",
                name=snap.name,
            )
        st.success(message, icon=":material/save:")
