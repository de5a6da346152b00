"""The training replay figure: the heatmap's colour bar stands clear of both plots (between them it once sat on
the loss axis's numbers), and the step is marked on the loss curve."""

from __future__ import annotations

import numpy as np

from explorer.figures.heads import replay_frame
from explorer.figures.theme import TICK_SIZE, text_width_px

PLOT_AREA_PX = 400  # the replay's plot area (figure less its margins) at 1024x768, the narrowest


def test_the_colour_bar_is_clear_of_the_heatmap_and_the_loss_axis():
    weights = np.eye(4)[::-1]
    figure = replay_frame(weights, list("dcba"), list("abcd"), [1, 2, 3], [3.0, 2.0, 1.0], 2).to_plotly_json()
    layout = figure["layout"]
    bar = layout["coloraxis"]["colorbar"]
    heatmap_right, loss_left, loss_right = (
        layout["xaxis"]["domain"][1],
        layout["xaxis2"]["domain"][0],
        layout["xaxis2"]["domain"][1],
    )
    # Between the two plots the bar once sat on the loss axis's numbers and title (at 1024 px, both languages):
    # it stands right of both plots, and the gap still holds the loss axis's numbers ("2.5") and its title.
    assert bar["xanchor"] == "left" and bar["x"] > loss_right
    # Numbers, their gap, the title's line and plotly's stand-offs either side of it (at 0.14 the title still
    # touched the heatmap in a 1024x768 screenshot).
    axis_px = text_width_px("2.5", TICK_SIZE) + 8 + TICK_SIZE * 1.4 + 2 * 8
    assert loss_left - heatmap_right > axis_px / PLOT_AREA_PX, (heatmap_right, loss_left)
    assert figure["data"][0]["meta"]["step"] == 2
    assert layout["shapes"][0]["x0"] == 2
