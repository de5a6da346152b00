"""Training figures (Section 5): loss, the warm-up learning-rate schedule, BLEU and throughput by step, and
how one head's cross-attention forms during training."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.attention import index_axis, pair_heatmap, weight_axis
from explorer.figures.theme import (
    NARROW_FIGURE_WIDTH,
    TICK_SIZE,
    apply_theme,
    color,
    legend_below,
    text_width_px,
)
from explorer.i18n import translate


def _series(x: Sequence[float], y: Sequence[float], name: str) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = np.asarray(x), np.asarray(y)
    assert xs.ndim == 1 and xs.shape == ys.shape, (
        f"expected steps and {name} of the same length, got shapes {xs.shape} and {ys.shape}"
    )
    return xs, ys


def _step_line(
    x: np.ndarray,
    y: np.ndarray,
    name: str,
    hovertemplate: str,
    *,
    colour: int,
    width: int = 3,
    markers: bool = False,
    dash: str | None = None,
) -> go.Scatter:
    """One series against the training step: a line, with a marker at each point for sparse series
    (validation loss, BLEU)."""
    return go.Scatter(
        x=x,
        y=y,
        mode="lines+markers" if markers else "lines",
        name=name,
        line=dict(color=color(colour), width=width)
        if dash is None
        else dict(color=color(colour), width=width, dash=dash),
        marker=dict(size=8) if markers else None,
        hovertemplate=hovertemplate,
    )


def _mark_warmup_end(
    fig: go.Figure, warmup_steps: int, peak: float, name: str, text: str, lang: str, **trace: object
) -> None:
    """The end of the warm-up, where the rate of Eq. 3 peaks: a labelled diamond and a dashed vertical line."""
    step, rate = translate("step", lang), translate("learning rate", lang)
    fig.add_trace(
        go.Scatter(
            x=[warmup_steps],
            y=[peak],
            mode="markers+text",
            name=name,
            marker=dict(size=14, color=color(1), symbol="diamond"),
            text=[text],
            textposition="top right",
            hovertemplate=translate("end of warm-up", lang) + f"<br>{step} %{{x}}<br>{rate} %{{y:.3e}}<extra></extra>",
            **trace,
        )
    )
    fig.add_vline(x=warmup_steps, line=dict(color=color(1), dash="dash", width=2))


def _by_step(fig: go.Figure, y_title: str, title: str | None, lang: str, **y_axis: object) -> go.Figure:
    """Axis titles and theme shared by the curves against the training step."""
    fig.update_xaxes(title_text=translate("training step", lang))
    fig.update_yaxes(title_text=y_title, **y_axis)
    return apply_theme(fig, title=title, height=440)


def loss_curve(
    steps: Sequence[int],
    train_loss: Sequence[float],
    val_steps: Sequence[int] | None = None,
    val_loss: Sequence[float] | None = None,
    *,
    title: str | None = None,
    y_title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Training loss against step, with validation loss as a second line when given.

    The paper's training loss is label-smoothed cross-entropy (Section 5.4, eps_ls = 0.1), so it stays
    above the plain cross-entropy of the validation set; say which one `y_title` shows (default
    "loss (nats per token)" in `lang`).
    """
    xs, ys = _series(steps, train_loss, "train_loss")
    step = translate("step", lang)
    hover = f"{step} %{{x}}<br>" + translate("train loss", lang) + " %{y:.4f}<extra></extra>"
    fig = go.Figure(_step_line(xs, ys, translate("train", lang), hover, colour=0))
    if val_loss is not None:
        assert val_steps is not None, "val_loss needs val_steps"
        vx, vy = _series(val_steps, val_loss, "val_loss")
        hover = f"{step} %{{x}}<br>" + translate("validation loss", lang) + " %{y:.4f}<extra></extra>"
        fig.add_trace(_step_line(vx, vy, translate("validation", lang), hover, colour=1, markers=True))
    return _by_step(fig, translate("loss (nats per token)", lang) if y_title is None else y_title, title, lang)


def lr_curve(
    steps: Sequence[int],
    lrs: Sequence[float],
    warmup_steps: int | None = None,
    *,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Learning rate against step (Eq. 3: d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)).

    With warmup_steps the end of the linear warm-up, where the rate peaks, is marked by a dashed line
    and a labelled point (trace 1, at the rate interpolated at that step).
    """
    xs, ys = _series(steps, lrs, "lrs")
    step, rate = translate("step", lang), translate("learning rate", lang)
    fig = go.Figure(_step_line(xs, ys, rate, f"{step} %{{x}}<br>{rate} %{{y:.3e}}<extra></extra>", colour=0))
    if warmup_steps is not None:
        peak = float(np.interp(warmup_steps, xs, ys))
        text = translate("warm-up ends: step {step}, lr {lr}", lang, step=f"{warmup_steps:,}", lr=f"{peak:.2e}")
        _mark_warmup_end(fig, warmup_steps, peak, translate("warm-up peak", lang), text, lang)
    fig.update_layout(showlegend=False)
    # Headroom above the peak for its label.
    top = float(np.max(ys))
    return _by_step(fig, rate, title, lang, exponentformat="e", range=[0, 1.2 * top] if top > 0 else None)


def bleu_curve(steps: Sequence[int], bleu: Sequence[float], *, title: str | None = None, lang: str = "en") -> go.Figure:
    """Validation BLEU (0-100, the paper's Table 2 scale) against step."""
    xs, ys = _series(steps, bleu, "bleu")
    hover = translate("step", lang) + " %{x}<br>BLEU %{y:.2f}<extra></extra>"
    fig = go.Figure(_step_line(xs, ys, "BLEU", hover, colour=2, markers=True))
    return _by_step(fig, "BLEU", title, lang, rangemode="tozero")


def throughput_curve(
    steps: Sequence[int], tokens_per_s: Sequence[float], *, title: str | None = None, lang: str = "en"
) -> go.Figure:
    """Training throughput in tokens per second against step."""
    xs, ys = _series(steps, tokens_per_s, "tokens_per_s")
    hover = translate("step", lang) + " %{x}<br>%{y:,.0f} " + translate("tokens/s", lang) + "<extra></extra>"
    fig = go.Figure(_step_line(xs, ys, translate("throughput", lang), hover, colour=3))
    return _by_step(fig, translate("throughput (tokens / s)", lang), title, lang, rangemode="tozero")


def lr_schedule_curve(
    steps: Sequence[int],
    lrs: Sequence[float],
    planned_steps: Sequence[int],
    planned_lrs: Sequence[float],
    warmup_steps: int,
    *,
    x_max: float | None = None,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """The learning rate a run has used (solid, trace 1) over the whole planned schedule (dashed, trace 0).

    The schedule is Eq. 3 (Section 5.3): a linear warm-up for `warmup_steps` steps, then decay with the
    inverse square root of the step. The end of the warm-up, where the rate peaks, is marked (trace 2) and
    drawn as a dashed vertical line, so the warm-up is visible before training reaches it. `x_max` limits
    the step axis (the whole plan is still there to zoom out to), so a short warm-up in a long run stays
    visible.
    """
    px, py = _series(planned_steps, planned_lrs, "planned_lrs")
    xs, ys = _series(steps, lrs, "lrs")
    step, rate = translate("step", lang), translate("learning rate", lang)
    planned_hover = f"{step} %{{x}}<br>" + translate("planned learning rate", lang) + " %{y:.3e}<extra></extra>"
    fig = go.Figure(
        _step_line(px, py, translate("schedule (Eq. 3)", lang), planned_hover, colour=0, width=2, dash="dot")
    )
    used_hover = f"{step} %{{x}}<br>{rate} %{{y:.3e}}<extra></extra>"
    fig.add_trace(_step_line(xs, ys, translate("used so far", lang), used_hover, colour=0, width=4))
    peak = float(np.interp(warmup_steps, px, py)) if len(px) else 0.0
    text = translate("warm-up ends: step {step}", lang, step=f"{warmup_steps:,}")
    _mark_warmup_end(fig, warmup_steps, peak, translate("warm-up ends", lang), text, lang, showlegend=False)
    top = float(max(np.max(py) if len(py) else 0.0, np.max(ys) if len(ys) else 0.0))
    right = x_max if x_max is not None else max(float(np.max(px)) if len(px) else 1.0, float(warmup_steps))
    fig.update_xaxes(range=[0, right * 1.02])
    _by_step(fig, rate, title, lang, exponentformat="e", range=[0, 1.25 * top] if top > 0 else None)
    # Under the axis: inside the plot the legend would cover the curve or the warm-up label.
    return legend_below(fig)


def _panels_per_row(n: int, n_source: int, label_px: float, width: float) -> int:
    """How many snapshots fit side by side in a `width` px figure: each panel needs its own row labels
    (`label_px`) and a column per source token wide enough for its upright label, beside the axis title and
    the colour bar."""
    panel_px = label_px + 16 + n_source * (TICK_SIZE + 6)
    return max(1, min(n, int((width - 150) // panel_px)))


def attention_evolution(
    weights: Sequence[np.ndarray],
    steps: Sequence[int],
    output_labels: Sequence[Sequence[str]],
    source_labels: Sequence[str],
    *,
    title: str | None = None,
    width: float = NARROW_FIGURE_WIDTH,
    lang: str = "en",
) -> go.Figure:
    """One head's cross-attention at several training steps: watch attention form.

    weights[i] is the (output, source) matrix at steps[i]; the model's output, and so the rows, may differ
    from one snapshot to the next (output_labels[i]), the source columns do not. One heatmap trace per
    snapshot, in the order given, all on one colour axis fixed to [0, 1]; rows are output tokens (queries)
    from the top, columns source tokens (keys). The panels sit in a grid as many to a row as fit a `width` px
    figure with every label readable (each panel's row labels between it and the one to its left, each
    source token's upright label in a column of its own); a column of panels shares its source labels, drawn
    under its lowest panel.
    """
    n = len(weights)
    assert n >= 1 and len(steps) == n and len(output_labels) == n, (
        f"expected as many steps and label lists as matrices ({n}), got {len(steps)} and {len(output_labels)}"
    )
    matrices = [np.asarray(w) for w in weights]
    for w, labels, step in zip(matrices, output_labels, steps, strict=False):
        assert w.ndim == 2 and w.shape == (len(labels), len(source_labels)), (
            f"step {step}: expected weights (output={len(labels)}, source={len(source_labels)}), got {w.shape}"
        )
    label_px = max(text_width_px(label, TICK_SIZE) for labels in output_labels for label in labels)
    per_row = _panels_per_row(n, len(source_labels), label_px, width)
    grid_rows = -(-n // per_row)
    longest = max(w.shape[0] for w in matrices)
    source_px = max(text_width_px(label, TICK_SIZE) for label in source_labels) + 10
    # Per grid row: the cells, its subplot title above and the upright source labels below.
    row_px = max(160, 24 * longest) + 40 + source_px
    height = max(380, row_px * grid_rows + 120)
    fig = make_subplots(
        rows=grid_rows,
        cols=per_row,
        horizontal_spacing=min(0.3, (label_px + 24) / width) if per_row > 1 else 0.0,
        vertical_spacing=(source_px + 50) / height if grid_rows > 1 else 0.0,
        subplot_titles=[translate("step {step}", lang, step=f"{s:,}") for s in steps],
    )
    for i, (w, labels, step) in enumerate(zip(matrices, output_labels, steps, strict=False)):
        row, col = i // per_row + 1, i % per_row + 1
        fig.add_trace(
            pair_heatmap(
                w,
                labels,
                source_labels,
                coloraxis="coloraxis",
                name=translate("step {step}", lang, step=step),
                meta=dict(step=int(step)),
                xgap=1,
                ygap=1,
                hovertemplate=translate("step {step}", lang, step=f"{step:,}")
                + "<br>%{customdata[0]} \u2192 %{customdata[1]}: %{z:.3f}<extra></extra>",
            ),
            row=row,
            col=col,
        )
        fig.update_xaxes(index_axis(source_labels), tickangle=-90, row=row, col=col)
        fig.update_yaxes(index_axis(labels, reverse=True), row=row, col=col)
    fig.update_xaxes(title_text=translate("source (keys)", lang), row=grid_rows, col=1)
    fig.update_yaxes(title_text=translate("output (queries)", lang), row=1, col=1)
    fig.update_layout(coloraxis=weight_axis(translate("weight", lang)))
    apply_theme(fig, title=title, height=height)
    return fig
