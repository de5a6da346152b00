"""The Heads page's figure builders remember their figures (explorer/figures/memo.py): a call with inputs seen
before returns the same figure data as building it anew, as a copy of its own that the caller may change."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import heads
from explorer.figures.memo import remembered

RNG = np.random.default_rng(0)


def data(figure: go.Figure) -> dict[str, Any]:
    """The figure as plotly.js receives it (a copy may order the layout's keys otherwise: same figure)."""
    return json.loads(figure.to_json())


LABELS = ["▁A", "▁man", "▁rides", "."]


def _rows(shape: tuple[int, ...]) -> np.ndarray:
    w = RNG.random(shape)
    return w / w.sum(-1, keepdims=True)


CALLS: dict[str, tuple[Callable[..., go.Figure], tuple[Any, ...], dict[str, Any]]] = {
    "importance_heatmaps": (
        heads.importance_heatmaps,
        ({"encoder_self": RNG.normal(size=(2, 4)), "cross": RNG.normal(size=(2, 4))},),
        {"lang": "ko"},
    ),
    "pruning_curves": (heads.pruning_curves, ({"cross": [(0, 30.0), (1, 29.5), (2, 27.0)]}, 30.0), {}),
    "rollout_comparison": (heads.rollout_comparison, (_rows((4, 4)), _rows((4, 4)), LABELS, LABELS), {}),
    "layer_heads": (heads.layer_heads, (_rows((4, 4, 4)), [False, True, False, False], LABELS, LABELS), {}),
    "replay_frame": (heads.replay_frame, (_rows((4, 4)), LABELS, LABELS, [0, 50, 100], [5.0, 3.0, 2.5], 50), {}),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_remembered_figure_has_the_data_of_a_fresh_build_and_is_the_callers_own(name):
    build, args, kwargs = CALLS[name]
    fresh = data(build.__wrapped__(*args, **kwargs))  # the builder itself, nothing remembered
    first = build(*args, **kwargs)
    again = build(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], **kwargs)  # equal values, new objects
    assert data(first) == fresh and data(again) == fresh
    assert again is not first
    first.update_layout(height=123, title_text="changed by one caller")
    assert data(build(*args, **kwargs)) == fresh, "a caller's change reached the remembered figure"


def test_other_inputs_get_their_own_figure():
    build, (w, off, q, k), _ = CALLS["layer_heads"]
    other = [True, False, False, False]
    assert data(build(w, other, q, k)) == data(build.__wrapped__(w, other, q, k))
    assert data(build(w, other, q, k)) != data(build(w, off, q, k))


def test_arguments_that_are_not_values_build_every_time_and_the_oldest_figure_goes_first():
    built: list[int] = []

    @remembered(maxsize=2)
    def figure(n: int, label: Callable[[int], str] | None = None) -> go.Figure:
        built.append(n)
        return go.Figure(layout={"title": {"text": label(n) if label else str(n)}})

    figure(1, label=lambda n: f"#{n}")
    figure(1, label=lambda n: f"#{n}")
    assert built == [1, 1], "a lambda cannot be keyed on: built each time"
    for n in (1, 2, 1, 3, 1, 2):
        figure(n)
    # 1 and 2 built, 1 hit, 3 built (2 goes: least recently used), 1 hit, 2 built again.
    assert built == [1, 1, 1, 2, 3, 2]
