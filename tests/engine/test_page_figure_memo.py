"""Translate's attention matrix and Beam's tree remember their figures (explorer/figures/memo.py): a call with inputs
seen before is served from memory with the data a fresh build has, and a changed input builds anew."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from explorer.figures import attention
from tests.engine.test_figure_memo import data

RNG = np.random.default_rng(35)
QUERY = ["▁Ein", "▁Mann", "▁fährt", "."]
KEY = ["▁A", "▁man", "▁rides", "▁a", "."]


def counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of `module.name`, a step every build of the figure takes (a hit skips it)."""
    calls: list[int] = []
    inner: Callable[..., Any] = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return inner(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def _weights() -> np.ndarray:
    w = RNG.random((len(QUERY), len(KEY)))  # new values per test: nothing another test built can be hit
    return w / w.sum(-1, keepdims=True)


def test_the_attention_matrix_is_remembered_with_the_data_of_a_fresh_build(monkeypatch):
    w = _weights()
    kwargs: dict[str, Any] = dict(title="Layer 3, head 2", x_title="source", y_title="target", show_values=True)
    fresh = data(attention.attention_heatmap.__wrapped__(w, QUERY, KEY, **kwargs))
    builds = counted(monkeypatch, attention, "pair_heatmap")
    first = attention.attention_heatmap(w, QUERY, KEY, **kwargs)
    assert len(builds) == 1
    again = attention.attention_heatmap(w.copy(), list(QUERY), list(KEY), **kwargs)  # equal values, new objects
    assert len(builds) == 1, "a head shown before is built again"
    assert data(first) == fresh and data(again) == fresh
    heatmap = again.data[0]
    assert np.array_equal(heatmap.z, w) and list(again.layout.yaxis.ticktext) == QUERY
    assert again.layout.title.text == "Layer 3, head 2"
    first.update_layout(title_text="changed by one caller")
    assert data(attention.attention_heatmap(w, QUERY, KEY, **kwargs)) == fresh


def test_another_head_or_title_builds_its_own_matrix(monkeypatch):
    w = _weights()
    attention.attention_heatmap(w, QUERY, KEY, title="head 1")
    builds = counted(monkeypatch, attention, "pair_heatmap")
    other = w[::-1].copy()
    changed = attention.attention_heatmap(other, QUERY, KEY, title="head 1")
    retitled = attention.attention_heatmap(w, QUERY, KEY, title="head 2")
    assert len(builds) == 2
    assert np.array_equal(changed.data[0].z, other) and retitled.layout.title.text == "head 2"
    assert data(changed) == data(attention.attention_heatmap.__wrapped__(other, QUERY, KEY, title="head 1"))
