"""The live view's curves: loss, the learning rate against Eq. 3's plan, validation BLEU, throughput."""

from __future__ import annotations

import streamlit as st

from explorer.figures.training import bleu_curve, loss_curve, lr_schedule_curve, throughput_curve
from explorer.training.estimate.plan import planned_schedule
from explorer.training.launcher import RunSnapshot
from ui.figures import show_figure
from ui.i18n import t


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
