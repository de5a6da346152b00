"""A figure is themed for the page once per distinct figure (ui/figures.py `_themed`): what the page draws is the
same spec as theming a fresh copy every time, for both page themes and presenter scaling; the caller's figure is
left as it was; an unchanged figure is served from memory and a changed one is themed anew."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.heads import layer_heads
from explorer.figures.theme import for_page_theme, scale_text
from ui.figures import _themed


def _figure(weight: float = 0.5) -> go.Figure:
    weights = np.full((2, 3, 4), 0.25)
    weights[1, 0] = [weight, 1 - weight, 0.0, 0.0]
    return layer_heads.__wrapped__(weights, [False, False], ["a", "b", "c"], ["x", "y", "z", "</s>"])


@pytest.mark.parametrize(("mode", "scale"), [("light", 1.0), ("dark", 1.0), ("dark", 1.25)])
def test_the_page_draws_what_theming_a_copy_draws(mode: str, scale: float) -> None:
    fig = _figure()
    before = json.loads(fig.to_json())
    expected = json.loads(scale_text(for_page_theme(go.Figure(fig), mode), scale).to_json())
    assert json.loads(_themed(fig, mode, scale).to_json()) == expected
    assert json.loads(fig.to_json()) == before, "the caller's figure keeps its colours"


def test_an_unchanged_figure_is_themed_once_and_a_changed_one_again() -> None:
    first = _themed(_figure(0.5), "dark", 1.0)
    assert _themed(_figure(0.5), "dark", 1.0) is first, "equal figures share one themed figure"
    changed = _themed(_figure(0.7), "dark", 1.0)
    assert changed is not first and changed.data[1].z[0][0] == pytest.approx(0.7)
    assert _themed(_figure(0.5), "light", 1.0) is not first, "the theme is part of the key"
