"""plotly builds its property validators one thread at a time once explorer.figures is imported (module doc of
explorer/figures/plotly_threads.py): sessions building figures together never build two at once."""

from __future__ import annotations

import threading
import time

import plotly.graph_objects as go
from plotly.validator_cache import ValidatorCache

import explorer.figures  # noqa: F401 - importing the package serialises the validators
from explorer.figures import plotly_threads


def test_validators_are_built_one_thread_at_a_time(monkeypatch):
    """Under the wrapper, a slow build in one thread keeps the others out until it is done."""
    inside, most = [0], [0]

    def slow_build(parent_path: str, prop_name: str) -> str:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.01)  # the other threads get the interpreter meanwhile
        inside[0] -= 1
        return f"{parent_path}.{prop_name}"

    monkeypatch.setattr(ValidatorCache, "get_validator", staticmethod(slow_build))
    plotly_threads.serialise_validators()  # wraps the stand-in as it wraps plotly's own
    barrier, found = threading.Barrier(8), []

    def lookup(i: int) -> None:
        barrier.wait()
        found.append(ValidatorCache.get_validator("heatmap", f"prop{i}"))

    threads = [threading.Thread(target=lookup, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(found) == sorted(f"heatmap.prop{i}" for i in range(8))
    assert most[0] == 1, f"{most[0]} builds ran at once"


def test_the_wrapper_is_installed_once_and_figures_still_validate():
    wrapped = ValidatorCache.get_validator
    assert getattr(wrapped, "_serialised", False)
    plotly_threads.serialise_validators()
    assert ValidatorCache.get_validator is wrapped  # not wrapped twice
    errors: list[str] = []

    def build() -> None:
        try:
            go.Figure(go.Heatmap(z=[[1, 2]], colorbar=dict(title="weight")))
            go.Figure(go.Scatter(x=[1], y=[2], marker=dict(colorbar=dict(len=0.5), color=[1])))
        except ValueError as error:
            errors.append(str(error)[:200])

    threads = [threading.Thread(target=build) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    try:
        go.Scatter(colorbar=dict(len=0.5))  # a scatter has no colorbar of its own: still refused
    except ValueError as error:
        assert "colorbar" in str(error)
    else:
        raise AssertionError("plotly accepted a property scatter traces do not have")
