"""The tour's figures for Table 3's rows on this machine (stop 9): the loss curves of a row's pair while it
trains, and for row (E) the exact share by sequence length, past the longest length seen in training."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from explorer.figures.theme import PALETTE
from explorer.figures.tour_attention import compact
from explorer.figures.tour_training import LEGEND_BELOW
from explorer.i18n import translate

if TYPE_CHECKING:  # types only: figures take values and never run the tour
    from explorer.tour.variants import VariantCurve


def variant_figure(curves: Sequence[VariantCurve], letter: str, *, lang: str = "en") -> go.Figure:
    """Training loss against step of a row's base and its variant (Table 3, row `letter`)."""
    fig = go.Figure()
    for i, curve in enumerate(curves):
        name = translate("{label} ({status})", lang, label=curve.label, status=translate(curve.status, lang))
        fig.add_trace(
            go.Scatter(
                x=list(curve.steps),
                y=list(curve.losses),
                name=name,
                mode="lines",
                line=dict(color=PALETTE[i], width=3),
                hovertemplate="step %{x}: %{y:.3f}<extra>" + name + "</extra>",
            )
        )
    fig.update_xaxes(title_text=translate("training step", lang))
    fig.update_yaxes(title_text=translate("training loss", lang))
    compact(fig, translate("Row ({row}) on this machine", lang, row=letter), 380)
    return fig.update_layout(legend=LEGEND_BELOW, margin=dict(b=130))


def length_figure(by_length: Mapping[str, Mapping[int, float]], longest_trained: int, *, lang: str = "en") -> go.Figure:
    """Row (E): the share of sequences reproduced exactly against their length, one line per model (label →
    {length: share}); the lengths after `longest_trained` were never seen in training."""
    fig = go.Figure()
    for i, (label, shares) in enumerate(by_length.items()):
        lengths = sorted(shares)
        fig.add_trace(
            go.Scatter(
                x=lengths,
                y=[shares[n] for n in lengths],
                name=label,
                mode="lines+markers",
                line=dict(color=PALETTE[i], width=3, dash="solid" if i == 0 else "dash"),
                hovertemplate="n = %{x}: %{y:.0%}<extra>" + label + "</extra>",
            )
        )
    shortest, longest = (f(f(s) for s in by_length.values()) for f in (min, max))
    fig.add_vrect(
        x0=longest_trained + 0.5,
        x1=longest + 0.5,
        fillcolor="gray",
        opacity=0.15,
        line_width=0,
        annotation_text=translate("longer than in training", lang),
        annotation_position="top left",
    )
    fig.update_xaxes(title_text=translate("sequence length", lang), dtick=2, range=[shortest - 0.5, longest + 0.5])
    fig.update_yaxes(title_text=translate("reproduced exactly", lang), tickformat=".0%", range=[-0.03, 1.03])
    compact(fig, translate("Row (E): trained up to length {n}, tested beyond", lang, n=longest_trained), 420)
    return fig.update_layout(legend={**LEGEND_BELOW, "y": -0.32}, margin=dict(b=140))
