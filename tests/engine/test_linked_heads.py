"""Synchronized heads: the Vega-Lite specs of explorer/figures/linked_heads.py, without a browser.

What makes the heads linked is in the spec: one point selection on the `query` field, declared in every head's
view, that every head's opacity and outline test; one colour scale with one domain. The browser side (hovering
really highlights another head) is tests/browser/test_linked_heads.py.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from explorer.figures.compare import Panel
from explorer.figures.linked_heads import SELECTION, LinkedLook, linked_grid, linked_heads
from explorer.figures.theme import MIN_TEXT_SIZE, PAGE_COLORS


def _panel(q: int, k: int, seed: int, title: str, prefix: str = "q") -> Panel:
    w = np.random.default_rng(seed).random((q, k))
    return Panel(w / w.sum(-1, keepdims=True), [f"{prefix}{i}" for i in range(q)], [f"k{j}" for j in range(k)], title)


def _views(spec: dict) -> list[dict]:
    """The unit (single-mark) views of a concat or facet spec, in order."""
    if "concat" in spec:
        return spec["concat"]
    return [spec["spec"]]


def _data(spec: dict, view: dict) -> pd.DataFrame:
    name = view.get("data", spec.get("data"))["name"]
    return pd.DataFrame(spec["datasets"][name])


def _font_sizes(node) -> list[float]:
    """Every font size set anywhere in the spec."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key.lower().endswith("fontsize") and isinstance(value, int | float):
                found.append(float(value))
            else:
                found += _font_sizes(value)
    elif isinstance(node, list):
        for item in node:
            found += _font_sizes(item)
    return found


def _assert_linked(spec: dict, n_views: int) -> None:
    """One selection on the query field, in every view, tested by every view's opacity and outline."""
    (param,) = spec["params"]
    assert param["name"] == SELECTION
    assert param["select"] == {"type": "point", "on": "pointerover", "clear": "pointerout", "fields": ["query"]}
    views = _views(spec)
    assert sorted(param["views"]) == sorted(v["name"] for v in views)
    assert len(param["views"]) == n_views
    for view in views:
        enc = view["encoding"]
        assert enc["opacity"]["condition"][0]["param"] == SELECTION
        assert enc["opacity"]["condition"][0]["value"] == 1.0 and enc["opacity"]["value"] < 0.5
        assert enc["stroke"]["condition"][0] == {
            "param": SELECTION,
            "value": enc["stroke"]["condition"][0]["value"],
        } | {"empty": False}
        assert enc["y"]["field"] == "query" and enc["x"]["field"] == "key"


def test_compare_heads_share_one_hover_selection_and_one_colour_scale():
    panels = [_panel(3, 4, 0, "A"), _panel(3, 4, 1, "B <s>"), _panel(5, 2, 2, "C", prefix="p")]
    spec = linked_heads(panels).to_dict()
    _assert_linked(spec, 3)
    views = _views(spec)
    assert spec["columns"] == 3
    assert [" · ".join(v["title"]["text"]) for v in views] == ["A", "B <s>", "C"]  # lines of a wrapped title
    # One colour scale: the same field, scheme and domain in every view, resolved shared, one legend.
    assert spec["resolve"] == {"scale": {"color": "shared"}}
    scales = {json.dumps(v["encoding"]["color"]["scale"], sort_keys=True) for v in views}
    assert len(scales) == 1
    assert views[0]["encoding"]["color"]["scale"]["domain"] == [0.0, 1.0]
    # The data is each panel's weights, cell by cell, with its tokens.
    for view, panel in zip(views, panels, strict=True):
        data = _data(spec, view).sort_values(["query", "key"])
        q, k = panel.weights.shape
        np.testing.assert_allclose(data["weight"].to_numpy().reshape(q, k), panel.weights)
        assert data["query_token"].tolist()[::k] == list(panel.query_labels)
        assert set(data["panel"]) == {panel.title}
    # B repeats A's query tokens: its rows are not labelled again; C reads other tokens and is.
    assert views[1]["encoding"]["y"]["axis"]["labels"] is False
    assert views[2]["encoding"]["y"]["axis"]["labels"] is True
    assert "p4" in views[2]["encoding"]["y"]["axis"]["labelExpr"]


def test_shared_scale_tops_at_the_largest_weight_shown():
    panels = [_panel(3, 4, 0, "A"), _panel(3, 4, 1, "B")]
    spec = linked_heads(panels, LinkedLook(zmax=None)).to_dict()
    top = max(p.weights.max() for p in panels)
    for view in _views(spec):
        assert view["encoding"]["color"]["scale"]["domain"] == pytest.approx([0.0, top])


def test_four_heads_two_by_two_and_no_altair_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the shared selection must not trip Altair's deduplication warning
        spec = linked_heads([_panel(4, 4, i, f"H{i}") for i in range(4)]).to_dict()
    assert spec["columns"] == 2
    _assert_linked(spec, 4)
    with pytest.raises(AssertionError):
        linked_heads([])


def test_grid_has_one_facet_per_head_with_one_based_labels():
    weights = np.random.default_rng(3).random((3, 4, 5, 6))
    spec = linked_grid(weights, [f"q{i}" for i in range(5)], [f"k{j}" for j in range(6)]).to_dict()
    _assert_linked(spec, 1)  # one unit view, repeated by the facet
    assert spec["facet"]["row"]["sort"] == ["Layer 1", "Layer 2", "Layer 3"]
    assert spec["facet"]["column"]["sort"] == ["Head 1", "Head 2", "Head 3", "Head 4"]
    data = _data(spec, spec["spec"])
    # One facet cell per head shown: every (layer, head) pair, each with the whole q x k matrix.
    assert data.groupby(["layer", "head"]).size().to_dict() == {
        (f"Layer {layer}", f"Head {head}"): 30 for layer in range(1, 4) for head in range(1, 5)
    }
    assert "Layer 2 · Head 3" in set(data["name"])
    cell = data[(data["layer"] == "Layer 2") & (data["head"] == "Head 3")].sort_values(["query", "key"])
    np.testing.assert_allclose(cell["weight"].to_numpy().reshape(5, 6), weights[1, 2])
    assert spec["spec"]["encoding"]["color"]["scale"]["domain"] == [0.0, 1.0]
    titled = linked_grid(
        weights, [f"q{i}" for i in range(5)], [f"k{j}" for j in range(6)], LinkedLook(title="All heads")
    ).to_dict()
    assert titled["title"]["text"] == ["All heads"] and titled["title"]["subtitle"] == "Rows: queries · columns: keys"


def test_grid_too_narrow_for_head_names_numbers_its_columns():
    weights = np.random.default_rng(5).random((6, 8, 4, 4))
    spec = linked_grid(weights, list("abcd"), list("wxyz"), LinkedLook(width=600)).to_dict()
    column = spec["facet"]["column"]
    assert column["sort"] == [str(h) for h in range(1, 9)] and column["header"]["title"] == "Head"
    assert spec["facet"]["row"]["sort"] == [f"Layer {n}" for n in range(1, 7)]
    assert min(_font_sizes(spec)) >= MIN_TEXT_SIZE


def test_korean_titles_and_readable_text():
    weights = np.random.default_rng(4).random((2, 2, 3, 3))
    spec = linked_grid(weights, ["a", "b", "c"], ["x", "y", "z"], LinkedLook(lang="ko", theme="dark")).to_dict()
    assert spec["facet"]["row"]["sort"] == ["레이어 1", "레이어 2"]
    assert spec["facet"]["column"]["sort"] == ["헤드 1", "헤드 2"]
    enc = spec["spec"]["encoding"]
    assert spec["title"]["text"] == "행: 쿼리 · 열: 키"  # one line instead of an axis title per thumbnail
    assert enc["color"]["legend"]["title"] == "가중치"
    assert "레이어 2 · 헤드 1" in set(_data(spec, spec["spec"])["name"])
    assert [t["title"] for t in enc["tooltip"]] == ["헤드", "쿼리", "키", "가중치"]
    # The dark page's text colour, and nothing smaller than 14 px.
    assert spec["config"]["axis"]["labelColor"] == PAGE_COLORS["dark"]["text"]
    assert min(_font_sizes(spec)) >= MIN_TEXT_SIZE
    korean = linked_heads([_panel(3, 3, 0, "A"), _panel(3, 3, 1, "B")], LinkedLook(lang="ko")).to_dict()
    assert _views(korean)[0]["encoding"]["y"]["axis"]["title"] == "쿼리"


def test_labels_left_out_when_they_would_be_under_14_px():
    """A long sentence in a short chart: row labels on hover only, never squeezed below 14 px."""
    q = 60
    spec = linked_heads([_panel(q, 5, 0, "A"), _panel(q, 5, 1, "B")], LinkedLook(height=440)).to_dict()
    first = _views(spec)[0]["encoding"]
    assert first["y"]["axis"]["labels"] is False
    assert first["x"]["axis"]["labels"] is True and first["x"]["axis"]["labelFontSize"] >= MIN_TEXT_SIZE
    assert min(_font_sizes(spec)) >= MIN_TEXT_SIZE


def test_token_labels_survive_quotes_and_hangul():
    tokens = ['"', "it's", "고양이", "<s>"]
    spec = linked_heads([Panel(np.full((4, 4), 0.25), tokens, tokens, "A")]).to_dict()
    expr = _views(spec)[0]["encoding"]["y"]["axis"]["labelExpr"]
    assert expr.endswith("[datum.value]")
    assert json.loads(expr.removesuffix("[datum.value]")) == tokens
