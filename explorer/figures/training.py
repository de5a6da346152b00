"""Training figures (Section 5): loss, the warm-up learning-rate schedule, BLEU and throughput by step."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.figures.theme import apply_theme, color

_STEP_TITLE = "training step"


def _series(x: Sequence[float], y: Sequence[float], name: str) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = np.asarray(x), np.asarray(y)
    assert xs.ndim == 1 and xs.shape == ys.shape, (
        f"expected steps and {name} of the same length, got shapes {xs.shape} and {ys.shape}"
    )
    return xs, ys


def loss_curve(
    steps: Sequence[int],
    train_loss: Sequence[float],
    val_steps: Sequence[int] | None = None,
    val_loss: Sequence[float] | None = None,
    *,
    title: str | None = None,
    y_title: str = "loss (nats per token)",
) -> go.Figure:
    """Training loss against step, with validation loss as a second line when given.

    The paper's training loss is label-smoothed cross-entropy (Section 5.4, eps_ls = 0.1), so it stays
    above the plain cross-entropy of the validation set; say which one `y_title` shows.
    """
    xs, ys = _series(steps, train_loss, "train_loss")
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="lines", name="train", line=dict(color=color(0), width=3),
        hovertemplate="step %{x}<br>train loss %{y:.4f}<extra></extra>",
    ))
    if val_loss is not None:
        assert val_steps is not None, "val_loss needs val_steps"
        vx, vy = _series(val_steps, val_loss, "val_loss")
        fig.add_trace(go.Scatter(
            x=vx, y=vy, mode="lines+markers", name="validation", line=dict(color=color(1), width=3),
            marker=dict(size=8), hovertemplate="step %{x}<br>validation loss %{y:.4f}<extra></extra>",
        ))
    fig.update_xaxes(title_text=_STEP_TITLE)
    fig.update_yaxes(title_text=y_title)
    return apply_theme(fig, title=title, height=440)


def lr_curve(
    steps: Sequence[int],
    lrs: Sequence[float],
    warmup_steps: int | None = None,
    *,
    title: str | None = None,
) -> go.Figure:
    """Learning rate against step (Eq. 3: d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)).

    With warmup_steps the end of the linear warm-up, where the rate peaks, is marked by a dashed line
    and a labelled point (trace 1, at the rate interpolated at that step).
    """
    xs, ys = _series(steps, lrs, "lrs")
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="lines", name="learning rate", line=dict(color=color(0), width=3),
        hovertemplate="step %{x}<br>learning rate %{y:.3e}<extra></extra>",
    ))
    if warmup_steps is not None:
        peak = float(np.interp(warmup_steps, xs, ys))
        fig.add_trace(go.Scatter(
            x=[warmup_steps], y=[peak], mode="markers+text", name="warm-up peak",
            marker=dict(size=14, color=color(1), symbol="diamond"),
            text=[f"warm-up ends: step {warmup_steps:,}, lr {peak:.2e}"], textposition="top right",
            hovertemplate="end of warm-up<br>step %{x}<br>learning rate %{y:.3e}<extra></extra>",
        ))
        fig.add_vline(x=warmup_steps, line=dict(color=color(1), dash="dash", width=2))
    fig.update_xaxes(title_text=_STEP_TITLE)
    # Headroom above the peak for its label.
    top = float(np.max(ys))
    fig.update_yaxes(title_text="learning rate", exponentformat="e",
                     range=[0, 1.2 * top] if top > 0 else None)
    fig.update_layout(showlegend=False)
    return apply_theme(fig, title=title, height=440)


def bleu_curve(steps: Sequence[int], bleu: Sequence[float], *, title: str | None = None) -> go.Figure:
    """Validation BLEU (0-100, the paper's Table 2 scale) against step."""
    xs, ys = _series(steps, bleu, "bleu")
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="lines+markers", name="BLEU", line=dict(color=color(2), width=3),
        marker=dict(size=8), hovertemplate="step %{x}<br>BLEU %{y:.2f}<extra></extra>",
    ))
    fig.update_xaxes(title_text=_STEP_TITLE)
    fig.update_yaxes(title_text="BLEU", rangemode="tozero")
    return apply_theme(fig, title=title, height=440)


def throughput_curve(steps: Sequence[int], tokens_per_s: Sequence[float], *,
                     title: str | None = None) -> go.Figure:
    """Training throughput in tokens per second against step."""
    xs, ys = _series(steps, tokens_per_s, "tokens_per_s")
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="lines", name="throughput", line=dict(color=color(3), width=3),
        hovertemplate="step %{x}<br>%{y:,.0f} tokens/s<extra></extra>",
    ))
    fig.update_xaxes(title_text=_STEP_TITLE)
    fig.update_yaxes(title_text="throughput (tokens / s)", rangemode="tozero")
    return apply_theme(fig, title=title, height=440)
