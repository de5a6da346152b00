"""The tour's figures for Table 1 (stop 6), training (stop 7), beam search (stop 8) and Table 3 (stop 9)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go

from explorer.figures.theme import PALETTE, escape_labels
from explorer.figures.tour_attention import compact
from explorer.i18n import translate

if TYPE_CHECKING:  # types only: figures take values and never run the tour
    from explorer.tour.numbers import BeamRow

LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.25, x=0)


def log_marker(fig: go.Figure, x: float, text: str, hue: str, dash: str, *, top: bool) -> None:
    """A vertical line at x on a log x-axis, labelled. The line takes x itself; an annotation on a log axis
    takes log10(x) (add_vline gets its annotation wrong there)."""
    fig.add_shape(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1, line=dict(color=hue, dash=dash, width=2))
    fig.add_annotation(
        xref="x",
        yref="paper",
        x=float(np.log10(x)),
        y=1 if top else 0,
        text=text,
        showarrow=False,
        xanchor="left",
        yanchor="top" if top else "bottom",
        font=dict(size=15),
    )


def operations_figure(
    n_sentence: int, d: int, *, kernel: int = 3, show_crossover: bool = True, lang: str = "en"
) -> go.Figure:
    """Operations per layer (Table 1, constants dropped) against n for this model's d, log-log, with n = d
    and this sentence's n marked.

    Without `show_crossover` (the tour asks where the curves cross before it tells) n runs only to d / 2, n = d
    is not marked, and neither is a sentence longer than d / 2."""
    end = 8 * max(d, n_sentence) if show_crossover else d / 2
    ns = np.geomspace(1, end, 200)
    curves = (
        (translate("Self-attention", lang), ns**2 * d, PALETTE[0]),
        (translate("Recurrent", lang), ns * d**2, PALETTE[2]),
        (translate("Convolutional", lang), kernel * ns * d**2, PALETTE[3]),
    )
    fig = go.Figure()
    for name, ops, hue in curves:
        fig.add_trace(
            go.Scatter(
                x=ns,
                y=ops,
                name=name,
                mode="lines",
                line=dict(color=hue, width=4),
                hovertemplate="n = %{x:.0f}: %{y:.3s}<extra>" + name + "</extra>",
            )
        )
    if show_crossover:
        log_marker(fig, d, translate("n = d = {d}", lang, d=d), "gray", "dash", top=True)
    if n_sentence <= end:
        marker = translate("this sentence: n = {n}", lang, n=n_sentence)
        log_marker(fig, n_sentence, marker, PALETTE[1], "solid", top=False)
    fig.update_xaxes(type="log", title_text=translate("sequence length n", lang))
    fig.update_yaxes(type="log", title_text=translate("operations per layer", lang))
    compact(fig, translate("Table 1 for this model: d = {d} (the paper: d = {paper})", lang, d=d, paper=512), 440)
    return fig.update_layout(legend=LEGEND_BELOW, margin=dict(b=130))


def measured_figure(rows: Sequence[dict[str, Any]], d: int, *, lang: str = "en") -> go.Figure:
    """Forward time (ms) of each measured layer against n, from explorer.complexity.measure rows."""
    fig = go.Figure()
    for i, label in enumerate(dict.fromkeys(r["label"] for r in rows)):
        mine = [r for r in rows if r["label"] == label]
        fig.add_trace(
            go.Scatter(
                x=[r["n"] for r in mine],
                y=[r["forward_ms"] for r in mine],
                name=label,
                mode="lines+markers",
                line=dict(color=PALETTE[i % len(PALETTE)], width=3),
            )
        )
    log_marker(fig, d, f"n = d = {d}", "gray", "dash", top=True)
    fig.update_xaxes(type="log", title_text=translate("sequence length n", lang))
    fig.update_yaxes(type="log", title_text=translate("forward time (ms)", lang))
    compact(fig, translate("Measured on this machine, d = {d}", lang, d=d), 440)
    return fig.update_layout(legend=LEGEND_BELOW, margin=dict(b=130))


def schedule_figure(
    steps: np.ndarray,
    rates: np.ndarray,
    *,
    warmup_steps: int,
    d_model: int,
    scale: float = 1.0,
    trained_steps: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """The learning rate against the step, steps (points,) and rates (points,): `scale` × Eq. 3 (the run's
    lr_scale), with the warm-up's end (the peak) and the end of training marked."""
    fig = go.Figure(
        go.Scatter(
            x=steps,
            y=rates,
            mode="lines",
            line=dict(color=PALETTE[0], width=4),
            name=translate("learning rate", lang),
            hovertemplate="step %{x}: %{y:.2e}<extra></extra>",
        )
    )
    fig.add_vline(
        x=warmup_steps,
        line=dict(color=PALETTE[1], dash="dash"),
        annotation_text=f"warmup_steps = {warmup_steps}",
        annotation_position="top right",
    )
    if trained_steps and trained_steps <= steps[-1]:
        fig.add_vline(
            x=trained_steps,
            line=dict(color="gray", dash="dot"),
            annotation_text=translate("stopped at step {step}", lang, step=trained_steps),
            annotation_position="bottom right",
        )
    fig.update_xaxes(title_text=translate("training step", lang))
    fig.update_yaxes(title_text=translate("learning rate", lang), exponentformat="e")
    title = (
        translate("Eq. 3 for d_model = {d}", lang, d=d_model)
        if scale == 1
        else translate("{scale} \u00d7 Eq. 3 (this run's lr_scale), d_model = {d}", lang, scale=f"{scale:g}", d=d_model)
    )
    return compact(fig, title, 400)


def smoothing_figure(
    top_tokens: Sequence[str],
    top_probs: Sequence[float] | np.ndarray,  # (k,)
    word: str,
    *,
    smoothed_target: float,
    smoothed_other: float,
    epsilon: float = 0.1,
    show_model: bool = True,
    lang: str = "en",
) -> go.Figure:
    """For one target position: the one-hot target, the smoothed target (ε_ls = `epsilon`) and, with
    `show_model`, the model's probabilities (the tour asks for the word's before it tells)."""
    labels = escape_labels([t.replace("\u2581", "") or t for t in top_tokens])
    right = [t == word for t in top_tokens]
    bars = [
        go.Bar(
            x=labels,
            y=[1.0 if r else 0.0 for r in right],
            name=translate("one-hot target", lang),
            marker_color=PALETTE[9],
        ),
        go.Bar(
            x=labels,
            y=[smoothed_target if r else smoothed_other for r in right],
            name=translate("smoothed target (\u03b5_ls = {epsilon})", lang, epsilon=f"{epsilon:g}"),
            marker_color=PALETTE[1],
        ),
    ]
    if show_model:
        bars.append(go.Bar(x=labels, y=list(top_probs), name=translate("this model", lang), marker_color=PALETTE[0]))
    fig = go.Figure(bars)
    fig.update_yaxes(title_text=translate("probability", lang), range=[0, 1.05])
    shown = escape_labels([word.replace("\u2581", "")])[0]
    compact(
        fig,
        translate("The target for \u201c{word}\u201d and the model's prediction", lang, word=shown)
        if show_model
        else translate(
            "The target for \u201c{word}\u201d (the model's prediction: after your guess)", lang, word=shown
        ),
        380,
    )
    return fig.update_layout(barmode="group", legend=LEGEND_BELOW, margin=dict(b=130))


def beam_figure(rows: Sequence[BeamRow], *, greedy_only: bool = False, lang: str = "en") -> go.Figure:
    """Length-normalised score of the best translation against beam size, one line per α; hover: the output.

    greedy_only: draw the greedy (beam 1) points alone, on the same axes: a wider beam's score differs from
    greedy's only when its translation does, so the other points answer the tour's question before the guess.
    """
    fig = go.Figure()
    for i, alpha in enumerate(dict.fromkeys(r.alpha for r in rows)):
        mine = [r for r in rows if r.alpha == alpha and (r.beam == 1 or not greedy_only)]
        fig.add_trace(
            go.Scatter(
                x=[r.beam for r in mine],
                y=[r.score for r in mine],
                name=f"\u03b1 = {alpha}",
                mode="lines+markers",
                line=dict(color=PALETTE[i], width=3),
                marker=dict(size=12),
                text=escape_labels([r.output for r in mine]),
                customdata=[r.length for r in mine],
                hovertemplate="beam %{x}: %{y:.3f}<br>%{text} (%{customdata} tokens)<extra></extra>",
            )
        )
    fig.update_xaxes(title_text=translate("beam size", lang), type="log", tickvals=sorted({r.beam for r in rows}))
    fig.update_yaxes(title_text=translate("score log P / lp(Y)", lang))
    title = translate("The best translation's score by beam size and \u03b1", lang)
    if greedy_only:
        title = translate("Greedy's score by \u03b1 (the wider beams' after your answer)", lang)
    compact(fig, title, 400)
    return fig.update_layout(legend=LEGEND_BELOW, margin=dict(b=130))


def table3_figure(rows: Sequence[dict[str, Any]], *, lang: str = "en") -> go.Figure:
    """Parameters (millions) of each Table 3 row: the paper's count beside the engine's, where the paper has one."""
    counted = [r for r in rows if r["paper_millions"] is not None]
    labels = [f"{r['row']} {r['change']}" if r["row"] not in ("base", "big") else r["row"] for r in counted]
    fig = go.Figure(
        [
            go.Bar(y=labels, x=[r[column] for r in counted], orientation="h", name=name, marker_color=PALETTE[hue])
            for column, name, hue in (
                ("paper_millions", translate("paper", lang), 9),
                ("engine_millions", translate("engine (count_parameters)", lang), 0),
            )
        ]
    )
    fig.update_xaxes(title_text=translate("parameters (millions)", lang))
    fig.update_yaxes(autorange="reversed")
    compact(fig, translate("Table 3: parameter counts", lang), 460)
    return fig.update_layout(barmode="group", legend=LEGEND_BELOW, margin=dict(b=130))
