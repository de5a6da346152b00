"""plotly figures shared between threads: copied without touching the original, and validators built one at a time.

Streamlit runs each browser session's script in its own thread, and the app shares built figures between sessions
(explorer/figures/memo.py, `st.cache_resource`, ui/figures.py's themed copies). plotly's own copy,
`go.Figure(figure)`, validates the original's traces in place: for each trace it takes "type" out of the trace's
dictionary of the figure being copied, builds the new trace, and puts "type" back. Two sessions copying one shared
figure at once then read a trace without its type, which plotly takes for a scatter: "Invalid property specified
for object of type plotly.graph_objs.Scatter: 'colorbar'" (seen on a fresh server with eight sessions opening
together; tests/engine/test_plotly_threads.py reproduces it), or "dictionary changed size during iteration".
`copy_figure` validates a deep copy of the original's dictionaries instead, and so only reads the original.

Separately, plotly 7's `ValidatorCache.get_validator` builds a property's validator on first use from parameters
it updates in place in one shared JSON table (`validator_params["plotly_name"] = prop_name`), so two threads
building validators at once could each get the other's parameters; `serialise_validators()` takes a lock around
it. Once built, a validator is a dictionary lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go

_lock = threading.Lock()


def copy_figure(figure: go.Figure) -> go.Figure:
    """A copy of `figure` that another thread may change, made without writing to `figure` (which other threads may
    be copying or drawing meanwhile). The copy has no subplot grid: restyle it, do not add traces by row and column.
    """
    # Deep copies of each trace's and the layout's own dictionaries (`to_plotly_json` of a trace or the layout; the
    # figure's `to_dict` would encode numpy arrays as base64), which the new figure's validation may change.
    return go.Figure(data=[trace.to_plotly_json() for trace in figure.data], layout=figure.layout.to_plotly_json())


def serialise_validators() -> None:
    """Make `ValidatorCache.get_validator` take a lock (once per process; later calls do nothing)."""
    from plotly.validator_cache import ValidatorCache

    current = ValidatorCache.get_validator
    if getattr(current, "_serialised", False):
        return
    original: Callable[[str, str], Any] = current

    def get_validator(parent_path: str, prop_name: str) -> Any:
        with _lock:
            return original(parent_path, prop_name)

    get_validator._serialised = True  # type: ignore[attr-defined]
    ValidatorCache.get_validator = staticmethod(get_validator)
