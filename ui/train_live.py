"""The train page's live view: pick a run, watch its status, progress and remaining time, loss, learning rate,
BLEU and throughput; stop, resume or save it; and watch the cross-attention of its watched sentences form.

Each run trains in its own process and writes its progress into its run folder; the view is an
`st.fragment` that re-reads that folder every `REFRESH_S` seconds while the run trains, so only it redraws.
It reruns the whole page when the run starts, ends or saves a model (the sidebar then lists the new model).
"""

from __future__ import annotations

import math
from pathlib import Path

import streamlit as st

from explorer.figures.attention import attention_heatmap
from explorer.figures.training import attention_evolution, bleu_curve, loss_curve, lr_schedule_curve, throughput_curve
from explorer.training.callbacks import SampleTranslation
from explorer.training.estimates import planned_schedule
from explorer.training.launcher import JobError, RunManager, RunSnapshot, RunStatus
from explorer.training.snapshots import AttentionSnapshot
from ui.figures import show_figure
from ui.i18n import t
from ui.markdown import md_escape
from ui.train_runs import checkpoint_target, duration, manager

REFRESH_S = 1.5  # seconds between redraws of a running job


def status_label(status: str) -> tuple[str, str, str]:
    """(label, badge colour, icon) of a run status."""
    return {
        "preparing": (t("Preparing"), "blue", ":material/hourglass_top:"),
        "running": (t("Training"), "green", ":material/play_arrow:"),
        "stopping": (t("Stopping"), "orange", ":material/pause:"),
        "finished": (t("Finished"), "green", ":material/check_circle:"),
        "stopped": (t("Stopped"), "orange", ":material/pause_circle:"),
        "failed": (t("Failed"), "red", ":material/error:"),
        "crashed": (t("Crashed"), "red", ":material/heart_broken:"),
    }[status]


def run_label(run: RunStatus) -> str:
    """One line per run in the picker: its name, status and step."""
    label = status_label(run.status)[0]
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


def watch_section() -> None:
    jobs = manager()
    labels = {run.path.name: run_label(run) for run in jobs.runs()}
    if not labels:
        st.info(t("No training run yet: set one up under **New run**."), icon=":material/model_training:")
        return
    if st.session_state.get("train_run") not in labels:
        wanted = st.query_params.get("run")
        st.session_state["train_run"] = wanted if wanted in labels else next(iter(labels))
    name = st.selectbox(t("Run"), tuple(labels), key="train_run", format_func=labels.get)
    st.query_params["run"] = name
    snap = jobs.snapshot(name)
    if snap is None:
        st.error(t("Run {name} is gone from the runs folder.", name=name), icon=":material/error:")
        return
    signature = (snap.live, len(snap.saved))
    st.fragment(run_every=REFRESH_S if snap.live else None)(monitor)(name, signature)


def monitor(name: str, signature: tuple[bool, int]) -> None:
    """The live view of one run; redrawn on its own every REFRESH_S seconds while the run trains."""
    jobs = manager()
    snap = jobs.snapshot(name)
    if snap is None or (snap.live, len(snap.saved)) != signature:
        st.rerun()  # started, ended, saved or removed: redraw the whole app (the sidebar lists a saved model)
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
            t("The training process crashed at step {step}: {error}.", step=f"{snap.step:,}", error=snap.error or "")
            + " "
            + where,
            icon=":material/heart_broken:",
        )
    elif snap.status == "failed":
        st.error(t("The run failed: {error}", error=snap.error or ""), icon=":material/error:")
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
        st.success(
            t(
                "Saved at step {step} as checkpoint **{name}**: pick it in the sidebar on any page.",
                step=f"{step:,}",
                name=Path(path).name,
            ),
            icon=":material/save:",
        )


def controls(jobs: RunManager, snap: RunSnapshot) -> None:
    """Stop or save a training run; resume, save or discard one that ended.

    Every button acts in its `on_click` callback, which runs before the page is drawn again, so the redraw
    shows the new state. Stop and save are files in the run folder, so they work from any browser session.
    """
    name = snap.name
    row = st.container(horizontal=True, vertical_alignment="bottom")
    if snap.live:
        row.button(
            t("Stop"),
            icon=":material/stop:",
            key=f"train_stop_{name}",
            disabled=snap.status == "stopping",
            help=t("Stops after the current step and saves latest/, so it can be resumed."),
            on_click=jobs.stop,
            args=(name,),
        )
        row.button(
            t("Save a copy now"),
            icon=":material/save:",
            key=f"train_save_now_{name}",
            help=t("Saves the model as checkpoint {name}.", name=name),
            on_click=save_while_training,
            args=(jobs, name),
        )
        if st.session_state.pop(f"train_saving_{name}", False):
            st.toast(t("Saving {name} after the current step…", name=name), icon=":material/save:")
        return
    if snap.checkpoint_step is not None or snap.status in ("crashed", "failed"):
        start = snap.checkpoint_step or 0  # a run that died before its first checkpoint starts again from 0
        until = snap.total_steps if start < snap.total_steps else start + max(snap.total_steps // 2, 100)
        steps_key = f"train_resume_steps_{name}"
        row.button(
            t("Resume") if snap.checkpoint_step is not None else t("Start again"),
            icon=":material/play_arrow:",
            key=f"train_resume_{name}",
            type="primary",
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
            help=t("The total number of steps after resuming."),
        )
    if snap.checkpoint_step is not None:
        row.button(
            t("Save as checkpoint"),
            icon=":material/save:",
            key=f"train_save_{name}",
            help=t(
                "Saves step {step} as checkpoint {name}, listed in every page's picker.",
                step=f"{snap.checkpoint_step:,}",
                name=name,
            ),
            on_click=save_stopped_run,
            args=(jobs, name),
        )
    with row.popover(t("Discard run"), icon=":material/delete:"):
        st.markdown(
            t(
                "Delete the run folder `{folder}` (its periodic checkpoints). Checkpoints saved to the list stay.",
                folder=snap.run_dir.name,
            )
        )
        st.button(t("Delete"), key=f"train_discard_{name}", type="primary", on_click=discard_run, args=(jobs, name))
    error = st.session_state.pop(f"train_control_error_{name}", None)
    if error:
        st.error(error, icon=":material/error:")


def save_while_training(jobs: RunManager, name: str) -> None:
    try:
        jobs.save(name, checkpoint_target(name))  # queued: the training process saves after its current step
    except (JobError, OSError, ValueError) as error:
        st.session_state[f"train_control_error_{name}"] = t("Not saved: {error}", error=error)
        return
    st.session_state[f"train_saving_{name}"] = True


def resume_run(jobs: RunManager, name: str, steps_key: str) -> None:
    try:
        jobs.resume(name, steps=int(st.session_state[steps_key]))
    except JobError as error:
        st.session_state[f"train_control_error_{name}"] = t("Not resumed: {error}", error=error)


def save_stopped_run(jobs: RunManager, name: str) -> None:
    try:
        jobs.save(name, checkpoint_target(name))
    except (JobError, OSError, ValueError) as error:
        st.session_state[f"train_control_error_{name}"] = t("Not saved: {error}", error=error)


def discard_run(jobs: RunManager, name: str) -> None:
    """Delete the run folder (only one under the runs root)."""
    try:
        jobs.discard(name)
    except JobError as error:
        st.session_state[f"train_control_error_{name}"] = str(error)
        return
    st.session_state.pop("train_run", None)


def charts(snap: RunSnapshot) -> None:
    h = snap.history
    left, right = st.columns(2)
    with left:
        val = [float("nan") if v is None else v for v in h["val_loss"]]
        show_figure(
            loss_curve(h["step"], h["loss"], h["eval_step"] or None, val or None, title=t("Loss")),
            f"{snap.name} loss",
            key=f"train_loss_{snap.name}",
        )
    with right:
        warmup = snap.warmup_steps or 1
        planned = planned_schedule(snap.total_steps, snap.d_model or 512, warmup, snap.lr_scale)
        # The axis grows with the run but always shows the warm-up whole.
        x_max = min(snap.total_steps, max(4 * warmup, 1.25 * snap.step))
        show_figure(
            lr_schedule_curve(h["step"], h["lr"], *planned, warmup, x_max=x_max, title=t("Learning rate (Eq. 3)")),
            f"{snap.name} learning rate",
            key=f"train_lr_{snap.name}",
        )
    left, right = st.columns(2)
    with left:
        points = [(s, b) for s, b in zip(h["eval_step"], h["val_bleu"], strict=True) if b is not None]
        if len(points) > 1:
            steps, bleu = zip(*points, strict=True)
            show_figure(
                bleu_curve(steps, bleu, title=t("Validation BLEU")), f"{snap.name} BLEU", key=f"train_bleu_{snap.name}"
            )
        elif points:
            st.caption(
                t(
                    "Validation BLEU was {bleu} at step {step}; its curve is drawn from the second evaluation on.",
                    bleu=f"{points[0][1]:.1f}",
                    step=f"{points[0][0]:,}",
                )
            )
        else:
            st.caption(t("Validation BLEU is measured at every evaluation; its curve is drawn from the second one on."))
    with right:
        show_figure(
            throughput_curve(h["step"], h["tokens_per_s"], title=t("Throughput")),
            f"{snap.name} throughput",
            key=f"train_tps_{snap.name}",
        )


def follow_off(key: str) -> None:
    st.session_state[key] = False


def attention_section(snap: RunSnapshot) -> None:
    st.subheader(t("Watch attention form"))
    if not snap.attention:
        st.caption(
            t("No attention snapshots: this run watches no sentences.")
            if not snap.sample_sentences
            else t("The watched sentences' attention appears here at the first evaluation.")
        )
        return
    name = snap.name
    sentences = [s.source for s in snap.attention[-1].samples]
    steps = [s.step for s in snap.attention]
    cols = st.columns((3, 1, 1))
    index = cols[0].selectbox(
        t("Sentence"), range(len(sentences)), key=f"train_att_sentence_{name}", format_func=lambda i: sentences[i]
    )
    shape = snap.attention[-1].samples[index].cross_attention.shape  # (layers, heads, output, source)
    layer = cols[1].selectbox(
        t("Layer"), range(shape[0]), key=f"train_att_layer_{name}", format_func=lambda i: str(i + 1), index=shape[0] - 1
    )
    head = cols[2].selectbox(t("Head"), range(shape[1]), key=f"train_att_head_{name}", format_func=lambda i: str(i + 1))
    follow_key, step_key = f"train_att_follow_{name}", f"train_att_step_{name}"
    st.session_state.setdefault(follow_key, True)
    if st.session_state[follow_key] or st.session_state.get(step_key) not in steps:
        st.session_state[step_key] = steps[-1]
    if len(steps) > 1:
        step = st.select_slider(
            t("Snapshot (training step)"),
            steps,
            key=step_key,
            on_change=follow_off,
            args=(follow_key,),
            format_func=lambda s: f"{s:,}",
            help=t("Attention is recorded at step 0 and at every evaluation."),
        )
        st.toggle(t("Follow the newest snapshot"), key=follow_key)
    else:
        step = steps[0]
    position = steps.index(step)
    sample = sentence_in(snap.attention[position], index)
    rows = shown_rows(sample)
    words = sample.output.split()
    output = " ".join(words[:rows]) + (" …" if len(words) > rows else "")
    st.markdown(
        t(
            "At step **{step}** the model translates *{source}* → **{output}**",
            step=f"{step:,}",
            source=md_escape(sample.source),
            output=md_escape(output) or t("(nothing)"),
        )
    )
    weights = sample.cross_attention[layer, head, :rows]
    show_figure(
        attention_heatmap(
            weights,
            sample.output_pieces[:rows],
            sample.source_pieces,
            x_title=t("source (keys)"),
            y_title=t("output (queries)"),
            title=t(
                "Cross-attention, layer {layer}, head {head}, step {step}",
                layer=layer + 1,
                head=head + 1,
                step=f"{step:,}",
            ),
        ),
        f"{name} cross-attention L{layer + 1} H{head + 1} step {step}",
        key=f"train_att_map_{name}",
    )
    if rows < len(sample.output_pieces):
        st.caption(
            t(
                "The first {rows} of {total} output tokens: a model that has not learnt to stop yet keeps "
                "going until the length limit.",
                rows=rows,
                total=len(sample.output_pieces),
            )
        )
    chosen = evenly_spaced(list(range(position + 1)), 5)
    if len(chosen) > 1:
        picked = [snap.attention[i] for i in chosen]
        samples = [sentence_in(p, index) for p in picked]
        fig = attention_evolution(
            [s.cross_attention[layer, head, : shown_rows(s)] for s in samples],
            [p.step for p in picked],
            [s.output_pieces[: shown_rows(s)] for s in samples],
            samples[0].source_pieces,
            title=t("Layer {layer}, head {head} during training", layer=layer + 1, head=head + 1),
        )
        show_figure(fig, f"{name} attention evolution L{layer + 1} H{head + 1}", key=f"train_att_evolution_{name}")


def sentence_in(snapshot: AttentionSnapshot, index: int) -> SampleTranslation:
    """The `index`-th watched sentence of a snapshot (the last one when an older snapshot holds fewer)."""
    return snapshot.samples[min(index, len(snapshot.samples) - 1)]


def shown_rows(sample: SampleTranslation) -> int:
    """Output rows worth drawing: an untrained model rambles on for 50 tokens past the source's length."""
    return min(len(sample.output_pieces), max(len(sample.source_pieces) + 4, 12))


def evenly_spaced(items: list, n: int) -> list:
    """Up to `n` items including the first and the last, evenly spaced."""
    if len(items) <= n:
        return items
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]
