"""The train page's live view: pick a run, watch its status, loss, learning rate, BLEU and throughput, stop,
resume or save it, and watch the cross-attention of its watched sentences form over training.

The view is an `st.fragment` that re-reads the job's immutable snapshot every `REFRESH_S` seconds while the
run trains, so only it redraws; it reruns the whole page when the run starts, ends or saves a model.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import streamlit as st

from explorer.figures.attention import attention_heatmap
from explorer.figures.training import attention_evolution, bleu_curve, loss_curve, lr_schedule_curve, throughput_curve
from explorer.training.callbacks import SampleTranslation
from explorer.training.estimates import planned_schedule
from explorer.training.jobs import JobError, JobManager, JobSnapshot, find_runs
from explorer.training.snapshots import AttentionSnapshot
from ui.figures import show_figure
from ui.train_jobs import checkpoint_target, duration, manager, runs_root
from ui.translate_view import md_escape

REFRESH_S = 1.5  # seconds between redraws of a running job
STATUS = {"preparing": ("Preparing", "blue", ":material/hourglass_top:"),
          "running": ("Training", "green", ":material/play_arrow:"),
          "stopping": ("Stopping", "orange", ":material/pause:"),
          "finished": ("Finished", "green", ":material/check_circle:"),
          "stopped": ("Stopped", "orange", ":material/pause_circle:"),
          "failed": ("Failed", "red", ":material/error:")}


def run_labels(jobs: JobManager) -> dict[str, str]:
    """name -> label for the runs of this process and the resumable ones on disk."""
    labels = {name: name for name in jobs.names()}  # their live status is drawn by the monitor
    for run in find_runs(runs_root()):
        if run.name not in labels:
            state = "finished" if run.finished else "stopped, can be resumed"
            labels[run.name] = f"{run.name} ({state} at step {run.step:,} of {run.total_steps:,})"
    return labels


def watch_section() -> None:
    jobs = manager()
    labels = run_labels(jobs)
    if not labels:
        st.info("No training run yet: set one up under **New run**.", icon=":material/model_training:")
        return
    if st.session_state.get("train_run") not in labels:
        wanted = st.query_params.get("run")
        st.session_state["train_run"] = wanted if wanted in labels else next(iter(labels))
    name = st.selectbox("Run", tuple(labels), key="train_run", format_func=labels.get)
    st.query_params["run"] = name
    if jobs.snapshot(name) is None:
        try:
            jobs.attach(name, runs_root() / name)
        except (OSError, ValueError, JobError) as error:
            st.error(f"Cannot read run {name!r}: {error}", icon=":material/error:")
            return
    snap = jobs.snapshot(name)
    assert snap is not None
    signature = (snap.live, len(snap.saved))
    st.fragment(run_every=REFRESH_S if snap.live else None)(monitor)(name, signature)


def monitor(name: str, signature: tuple[bool, int]) -> None:
    """The live view of one run; redrawn on its own every REFRESH_S seconds while the run trains."""
    jobs = manager()
    snap = jobs.snapshot(name)
    if snap is None:
        st.rerun()
    if (snap.live, len(snap.saved)) != signature:
        st.rerun()  # started, ended or saved: redraw the whole app (the sidebar lists a saved model at once)
    status_block(snap)
    controls(jobs, snap)
    if not snap.history["step"]:
        st.info("Waiting for the first training steps…", icon=":material/hourglass_top:")
        return
    charts(snap)
    attention_section(snap)


def status_block(snap: JobSnapshot) -> None:
    label, colour, icon = STATUS[snap.status]
    st.badge(label, color=colour, icon=icon)
    parts = [f"step {snap.step:,} of {snap.total_steps:,}", f"{duration(snap.elapsed_s)} of training"]
    eta = snap.eta_s()
    if eta is not None:
        parts.append(f"about {duration(eta)} left")
    st.progress(snap.progress, text=" · ".join(parts))
    if snap.error:
        st.error(f"The run failed: {snap.error}", icon=":material/error:")
    history = snap.history
    cols = st.columns(4)
    if history["loss"]:
        first = history["loss"][0]
        cols[0].metric("Training loss", f"{history['loss'][-1]:.3f}", f"{history['loss'][-1] - first:+.3f}",
                       delta_color="inverse", delta_description=f"since step {history['step'][0]:,}",
                       help="Label-smoothed cross-entropy per target token (nats).")
    val_loss = [v for v in history["val_loss"] if v is not None and not math.isnan(v)]
    cols[1].metric("Validation loss", f"{val_loss[-1]:.3f}" if val_loss else "—",
                   help="Cross-entropy per token on held-out pairs, without smoothing.")
    bleu = [b for b in history["val_bleu"] if b is not None]
    cols[2].metric("Validation BLEU", f"{bleu[-1]:.1f}" if bleu else "—", help="sacreBLEU, greedy decoding.")
    rate = snap.tokens_per_s
    cols[3].metric("Tokens / s", f"{rate:,.0f}" if rate else "—", help="Target tokens per second of training.")
    for path, step in snap.saved:
        st.success(f"Saved at step {step:,} as checkpoint **{Path(path).name}**: pick it in the sidebar on any "
                   "page.", icon=":material/save:")


def controls(jobs: JobManager, snap: JobSnapshot) -> None:
    """Stop or save a training run; resume, save, forget or discard a stopped one.

    Every button acts in its `on_click` callback, which runs before the page is drawn again: the redraw then
    shows the new state, and no click is lost when the page run is restarted (ui/frame.py does that to route
    a page through app.py, on a fresh server's first request and on every AppTest run).
    When a run starts, ends or saves, `monitor` sees its signature change and redraws the whole app.
    """
    name = snap.name
    row = st.container(horizontal=True, vertical_alignment="bottom")
    if snap.live:
        row.button("Stop", icon=":material/stop:", key=f"train_stop_{name}", disabled=snap.status == "stopping",
                   help="Stops after the current step and saves latest/, so it can be resumed.",
                   on_click=jobs.stop, args=(name,))
        row.button("Save a copy now", icon=":material/save:", key=f"train_save_now_{name}",
                   disabled=snap.status != "running", help=f"Saves the model as checkpoint {name!r}.",
                   on_click=save_while_training, args=(jobs, name))
        if st.session_state.pop(f"train_saving_{name}", False):
            st.toast(f"Saving {name!r} after the current step…", icon=":material/save:")
        return
    if not (snap.run_dir / "latest").exists():
        row.button("Remove from list", key=f"train_forget_{name}", on_click=jobs.forget, args=(name,))
        return
    more = max(snap.total_steps - snap.step, 0) or max(snap.total_steps // 2, 100)
    steps_key = f"train_resume_steps_{name}"
    row.button("Resume", icon=":material/play_arrow:", key=f"train_resume_{name}", type="primary",
               help=f"Continue from the last saved step ({snap.step:,}) up to the step on the right.",
               on_click=resume_run, args=(jobs, snap, steps_key))
    row.number_input("until step", snap.step + 1, 10_000_000, value=snap.step + more, width=180, key=steps_key,
                     help="The total number of steps after resuming.")
    row.button("Save as checkpoint", icon=":material/save:", key=f"train_save_{name}",
               help=f"Saves step {snap.step:,} as checkpoint {name!r}, listed in every page's picker.",
               on_click=save_stopped_run, args=(jobs, name))
    with row.popover("Discard run", icon=":material/delete:"):
        st.markdown(f"Delete the run folder `{snap.run_dir.name}` (its periodic checkpoints). Checkpoints saved "
                    "to the list stay.")
        st.button("Delete", key=f"train_discard_{name}", type="primary", on_click=discard_run, args=(jobs, snap))
    error = st.session_state.pop(f"train_control_error_{name}", None)
    if error:
        st.error(error, icon=":material/error:")


def save_while_training(jobs: JobManager, name: str) -> None:
    jobs.save(name, checkpoint_target(name))  # queued: the training thread saves after its current step
    st.session_state[f"train_saving_{name}"] = True


def resume_run(jobs: JobManager, snap: JobSnapshot, steps_key: str) -> None:
    try:
        jobs.resume(snap.name, snap.run_dir, steps=int(st.session_state[steps_key]))
    except JobError as error:
        st.session_state[f"train_control_error_{snap.name}"] = f"Not resumed: {error}"


def save_stopped_run(jobs: JobManager, name: str) -> None:
    try:
        jobs.save(name, checkpoint_target(name))
    except (JobError, OSError, ValueError) as error:
        st.session_state[f"train_control_error_{name}"] = f"Not saved: {error}"


def discard_run(jobs: JobManager, snap: JobSnapshot) -> None:
    """Delete the run folder (only one under the runs root) and drop the run from the list."""
    if snap.run_dir.resolve().parent == runs_root().resolve():
        shutil.rmtree(snap.run_dir, ignore_errors=True)
    jobs.forget(snap.name)
    st.session_state.pop("train_run", None)


def charts(snap: JobSnapshot) -> None:
    h = snap.history
    left, right = st.columns(2)
    with left:
        val = [float("nan") if v is None else v for v in h["val_loss"]]
        show_figure(loss_curve(h["step"], h["loss"], h["eval_step"] or None, val or None, title="Loss"),
                    f"{snap.name} loss", key=f"train_loss_{snap.name}")
    with right:
        warmup = snap.warmup_steps or 1
        planned = planned_schedule(snap.total_steps, snap.d_model or 512, warmup, snap.lr_scale)
        # The axis grows with the run but always shows the warm-up whole.
        x_max = min(snap.total_steps, max(4 * warmup, 1.25 * snap.step))
        show_figure(lr_schedule_curve(h["step"], h["lr"], *planned, warmup, x_max=x_max,
                                      title="Learning rate (Eq. 3)"),
                    f"{snap.name} learning rate", key=f"train_lr_{snap.name}")
    left, right = st.columns(2)
    with left:
        points = [(s, b) for s, b in zip(h["eval_step"], h["val_bleu"]) if b is not None]
        if len(points) > 1:
            steps, bleu = zip(*points)
            show_figure(bleu_curve(steps, bleu, title="Validation BLEU"), f"{snap.name} BLEU",
                        key=f"train_bleu_{snap.name}")
        elif points:
            st.caption(f"Validation BLEU was {points[0][1]:.1f} at step {points[0][0]:,}; its curve is drawn from "
                       "the second evaluation on.")
        else:
            st.caption("Validation BLEU is measured at every evaluation; its curve is drawn from the second one on.")
    with right:
        show_figure(throughput_curve(h["step"], h["tokens_per_s"], title="Throughput"), f"{snap.name} throughput",
                    key=f"train_tps_{snap.name}")


def follow_off(key: str) -> None:
    st.session_state[key] = False


def attention_section(snap: JobSnapshot) -> None:
    st.subheader("Watch attention form")
    if not snap.attention:
        st.caption("No attention snapshots: this run watches no sentences." if not snap.sample_sentences else
                   "The watched sentences' attention appears here at the first evaluation.")
        return
    name = snap.name
    sentences = [s.source for s in snap.attention[-1].samples]
    steps = [s.step for s in snap.attention]
    cols = st.columns((3, 1, 1))
    index = cols[0].selectbox("Sentence", range(len(sentences)), key=f"train_att_sentence_{name}",
                              format_func=lambda i: sentences[i])
    shape = snap.attention[-1].samples[index].cross_attention.shape  # (layers, heads, output, source)
    layer = cols[1].selectbox("Layer", range(shape[0]), key=f"train_att_layer_{name}", format_func=lambda i: str(i + 1),
                              index=shape[0] - 1)
    head = cols[2].selectbox("Head", range(shape[1]), key=f"train_att_head_{name}", format_func=lambda i: str(i + 1))
    follow_key, step_key = f"train_att_follow_{name}", f"train_att_step_{name}"
    st.session_state.setdefault(follow_key, True)
    if st.session_state[follow_key] or st.session_state.get(step_key) not in steps:
        st.session_state[step_key] = steps[-1]
    if len(steps) > 1:
        step = st.select_slider("Snapshot (training step)", steps, key=step_key, on_change=follow_off,
                                args=(follow_key,), format_func=lambda s: f"{s:,}",
                                help="Attention is recorded at step 0 and at every evaluation.")
        st.toggle("Follow the newest snapshot", key=follow_key)
    else:
        step = steps[0]
    position = steps.index(step)
    sample = sentence_in(snap.attention[position], index)
    rows = shown_rows(sample)
    words = sample.output.split()
    output = " ".join(words[:rows]) + (" …" if len(words) > rows else "")
    st.markdown(f"At step **{step:,}** the model translates *{md_escape(sample.source)}* → "
                f"**{md_escape(output) or '(nothing)'}**")
    weights = sample.cross_attention[layer, head, :rows]
    show_figure(attention_heatmap(weights, sample.output_pieces[:rows], sample.source_pieces, x_title="source (keys)",
                                  y_title="output (queries)",
                                  title=f"Cross-attention, layer {layer + 1}, head {head + 1}, step {step:,}"),
                f"{name} cross-attention L{layer + 1} H{head + 1} step {step}", key=f"train_att_map_{name}")
    if rows < len(sample.output_pieces):
        st.caption(f"The first {rows} of {len(sample.output_pieces)} output tokens: a model that has not learnt "
                   "to stop yet keeps going until the length limit.")
    chosen = evenly_spaced(list(range(position + 1)), 5)
    if len(chosen) > 1:
        picked = [snap.attention[i] for i in chosen]
        samples = [sentence_in(p, index) for p in picked]
        fig = attention_evolution([s.cross_attention[layer, head, :shown_rows(s)] for s in samples],
                                  [p.step for p in picked], [s.output_pieces[:shown_rows(s)] for s in samples],
                                  samples[0].source_pieces, title=f"Layer {layer + 1}, head {head + 1} during training")
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
