"""A figure capped for the first screen (`ui.layout.fit_height`) keeps its row labels apart: when the rows get
less than a label's line, every k-th row is labelled (hover still names each cell)."""

from __future__ import annotations

import numpy as np

from explorer.figures.attention import attention_heatmap
from explorer.figures.theme import TICK_SIZE
from ui.layout import FIRST_SCREEN_FIGURE_PX, fit_height


def heatmap(rows: int):
    labels = [f"w{i}" for i in range(rows)]
    return attention_heatmap(np.full((rows, 6), 1 / 6), labels, labels[:6])


def test_long_outputs_label_every_kth_row_once_capped():
    fig = fit_height(heatmap(30), FIRST_SCREEN_FIGURE_PX, 600)
    values = list(fig.layout.yaxis.tickvals)
    assert values[0] == 0 and 1 < len(values) < 30, values
    step = values[1] - values[0]
    assert values == list(range(0, 30, step))
    assert list(fig.layout.yaxis.ticktext) == [f"w{i}" for i in values]
    plot_px = FIRST_SCREEN_FIGURE_PX - fig.layout.margin.t - fig.layout.margin.b
    assert plot_px / 30 * step >= TICK_SIZE, "labelled rows are at least a label's height apart"
    assert fig.data[0].customdata[29][0][0] == "w29", "hover still names every row"


def test_short_outputs_keep_every_label():
    fig = fit_height(heatmap(8), FIRST_SCREEN_FIGURE_PX, 600)
    assert list(fig.layout.yaxis.tickvals) == list(range(8))


def test_many_source_pieces_stand_vertical():
    labels = [f"p{i}" for i in range(27)]
    fig = fit_height(attention_heatmap(np.full((5, 27), 1 / 27), labels[:5], labels), FIRST_SCREEN_FIGURE_PX, 600)
    assert fig.layout.xaxis.tickangle == 90 and list(fig.layout.xaxis.tickvals) == list(range(27))
    few = fit_height(attention_heatmap(np.full((5, 8), 1 / 8), labels[:5], labels[:8]), FIRST_SCREEN_FIGURE_PX, 600)
    assert few.layout.xaxis.tickangle is None, "a short sentence's keys keep plotly's choice of angle"
