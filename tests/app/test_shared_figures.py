"""Figures built once and shared by the visits and clicks that draw the same (st.cache_resource, never changed
after): the Heads page's remaining heads, the Beam page's tree and its hypothesis' attention. Each has the data
of the figure built directly by its builder, and a second visit builds none."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go

import ui.beam.hypothesis
import ui.beam.tree
import ui.heads.ablation
from explorer.figures.attention import attention_heatmap
from explorer.figures.beam_tree import beam_tree_figure
from explorer.figures.heads import layer_heads
from explorer.figures.theme import for_page_theme
from tests.apptest_helpers import chart, open_page


def spied(monkeypatch, module: Any, name: str) -> list[tuple[tuple, dict]]:
    """Record every call of `module.name` (the builder as the page module imported it), still building."""
    calls: list[tuple[tuple, dict]] = []
    original = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def as_drawn(figure: go.Figure) -> dict:
    """The figure as show_figure draws it on a light page."""
    return json.loads(for_page_theme(figure, "light").to_json())


def shared_once(monkeypatch, module: Any, builder: str, shared: Any, visit: Callable[[], Any], key: str):
    """Visit twice: the builder runs once, both visits draw the same chart; returns it and the builder's call."""
    calls = spied(monkeypatch, module, builder)
    shared.clear()
    shown = chart(visit(), key)
    assert len(calls) == 1
    assert chart(visit(), key) == shown
    assert len(calls) == 1, "the second visit drew the shared figure"
    return shown, calls[0]


def test_the_remaining_heads_figure_is_the_one_built_directly(checkpoint_root, one_torch_thread, monkeypatch):
    def visit():
        return open_page("pages/heads.py", model="reverse-fixture", h_sentence="a b c d e f g", heads="cross.1.1")

    shown, (args, kwargs) = shared_once(
        monkeypatch, ui.heads.ablation, "layer_heads", ui.heads.ablation._remaining_figure, visit, "heads_remaining"
    )
    direct = ui.heads.ablation.fit_height(
        layer_heads.__wrapped__(*args, **kwargs), ui.heads.ablation.FIGURE_PX, width=kwargs["width"]
    )
    expected = as_drawn(direct)
    assert shown["data"] == expected["data"]
    assert shown["layout"]["height"] == expected["layout"]["height"]
    assert shown["layout"]["annotations"] == expected["layout"]["annotations"], "the switched-off head titled 'off'"


def beam_visit():
    return open_page("pages/beam.py", model="words-fixture", beam_sentence="a small child sees the red dog .", beam_k=3)


def test_the_beam_tree_is_the_one_built_directly(checkpoint_root, one_torch_thread, monkeypatch):
    shown, (args, kwargs) = shared_once(
        monkeypatch, ui.beam.tree, "beam_tree_figure", ui.beam.tree._tree_figure, beam_visit, "beam_tree"
    )
    expected = as_drawn(beam_tree_figure.__wrapped__(*args, **kwargs))
    assert shown["data"] == expected["data"]
    assert shown["layout"]["title"] == expected["layout"]["title"]


def test_the_beam_hypothesis_attention_is_the_one_built_directly(checkpoint_root, one_torch_thread, monkeypatch):
    module = ui.beam.hypothesis
    shown, (args, kwargs) = shared_once(
        monkeypatch, module, "attention_heatmap", module._attention_figure, beam_visit, "beam_attention"
    )
    expected = as_drawn(attention_heatmap.__wrapped__(*args, **kwargs))
    assert shown["data"] == expected["data"]
    assert shown["layout"]["title"] == expected["layout"]["title"]
