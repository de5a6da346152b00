"""The class's answers as bars on the projector: one bar per option or per range of a number, in the
question's own units; the bar holding the model's answer is coloured only after the reveal."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.figures.theme import apply_theme, color, escape_labels
from explorer.rooms.tally import Tally

RIGHT_COLOR, HIDDEN_COLOR = "#2ca02c", "#8c8c8c"
BARS_PX = 300  # beside the question on the first screen of a 720-px projector


def bars_figure(tally: Tally, labels: Sequence[str], *, revealed: bool, x_title: str, y_title: str) -> go.Figure:
    """`labels`: the bars' labels as the reader sees them (the options' labels, the ranges), escaped here for
    plotly's pseudo-HTML, so a room's text is never drawn as markup."""
    assert len(labels) == len(tally.bars), f"{len(tally.bars)} bars, {len(labels)} labels"
    colours = [
        RIGHT_COLOR if revealed and bar.right else (color(0) if revealed else HIDDEN_COLOR) for bar in tally.bars
    ]
    fig = go.Figure(
        go.Bar(
            x=escape_labels(labels),
            y=[bar.count for bar in tally.bars],
            marker_color=colours,
            text=[str(bar.count) for bar in tally.bars],
            textposition="outside",
            cliponaxis=False,
            hoverinfo="skip",
        )
    )
    apply_theme(fig, height=BARS_PX)
    fig.update_layout(margin_t=30, showlegend=False)
    fig.update_xaxes(title_text=x_title, type="category")
    fig.update_yaxes(
        title_text=y_title, rangemode="tozero", dtick=max(1, max((b.count for b in tally.bars), default=1) // 5)
    )
    return fig
