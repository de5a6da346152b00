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


def _heatmap() -> go.Figure:
    import numpy as np

    return go.Figure(go.Heatmap(z=np.arange(900.0).reshape(30, 30), colorbar=dict(title="value")))


def _copy_together(copy, shared: go.Figure, seconds: float = 1.5) -> tuple[list[str], list[str]]:
    """Three threads copying `shared` and one reading it, for `seconds`, switching often: (errors, types read)."""
    import sys

    errors: list[str] = []
    types: list[str] = []
    stop = time.monotonic() + seconds

    def copier() -> None:
        try:
            while time.monotonic() < stop:
                types.extend(trace.type for trace in copy(shared).data)
        except Exception as error:  # noqa: BLE001 - the race's symptom is any exception
            errors.append(f"{type(error).__name__}: {str(error)[:120]}")

    def reader() -> None:
        try:
            while time.monotonic() < stop:
                types.extend(str(trace.get("type")) for trace in shared.to_dict()["data"])
        except Exception as error:  # noqa: BLE001 - reading while another thread writes: a changed dictionary
            errors.append(f"{type(error).__name__}: {str(error)[:120]}")

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=copier) for _ in range(3)] + [threading.Thread(target=reader)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    finally:
        sys.setswitchinterval(interval)
    return errors, types


def test_plotlys_own_copy_of_a_shared_figure_races_and_copy_figure_does_not():
    """`go.Figure(shared)` takes each trace's type out of the shared figure and puts it back: copies made together
    fail ("Scatter: 'colorbar'", a changed dictionary) or read a trace without its type. `copy_figure` only reads.
    The first half shows the test can see the race at all on this machine."""
    errors, types = _copy_together(go.Figure, _heatmap())
    assert errors or set(types) != {"heatmap"}, "plotly's own copy did not race here: this test would see nothing"
    errors, types = _copy_together(plotly_threads.copy_figure, _heatmap())
    assert not errors, errors
    assert types and set(types) == {"heatmap"}


def test_a_remembered_figure_handed_to_sessions_at_once_stays_whole():
    """The path the pages take: a remembered builder (explorer/figures/memo.py) returns a copy of one shared figure
    to every session's thread; eight sessions opening one page copied it together."""
    from explorer.figures.memo import remembered

    @remembered()
    def build(n: int) -> go.Figure:
        return _heatmap()

    shared = build(1)
    errors, types = _copy_together(lambda _: build(1), shared)
    assert not errors, errors
    assert types and set(types) == {"heatmap"}
