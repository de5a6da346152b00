"""The training replay figure: the heatmap's colour bar sits in the gap between the heatmap and the loss curve,
clear of both (it once sat on the loss axis's numbers), and the step is marked on the loss curve."""

from __future__ import annotations

import numpy as np

from explorer.figures.heads import replay_frame
from explorer.figures.theme import TICK_SIZE, text_width_px

FIGURE_WIDTH_PX = 860  # the Heads page's figure at 1280x720 beside the sidebar


def test_the_colour_bar_is_clear_of_the_heatmap_and_the_loss_axis():
    weights = np.eye(4)[::-1]
    figure = replay_frame(weights, list("dcba"), list("abcd"), [1, 2, 3], [3.0, 2.0, 1.0], 2).to_plotly_json()
    layout = figure["layout"]
    bar = layout["coloraxis"]["colorbar"]
    heatmap_right, loss_left = layout["xaxis"]["domain"][1], layout["xaxis2"]["domain"][0]
    # The bar, its numbers ("0.8") and its title (the title runs alongside, rotated: one line of text high).
    bar_px = bar["thickness"] + 8 + text_width_px("0.8", TICK_SIZE) + TICK_SIZE * 1.4
    # The loss axis's numbers ("2.5") and its title, left of the loss plot.
    axis_px = text_width_px("2.5", TICK_SIZE) + 8 + TICK_SIZE * 1.4
    assert bar["xanchor"] == "left" and bar["x"] > heatmap_right
    assert bar["x"] + bar_px / FIGURE_WIDTH_PX < loss_left - axis_px / FIGURE_WIDTH_PX, (bar["x"], loss_left)
    assert figure["data"][0]["meta"]["step"] == 2
    assert layout["shapes"][0]["x0"] == 2
