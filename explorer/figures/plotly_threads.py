"""plotly's validators built one thread at a time.

Streamlit runs each browser session's script in its own thread, so figures are built in several threads at once
(a class opening the same link). plotly 7's `ValidatorCache.get_validator` builds a property's validator on
first use from parameters it reads out of one shared JSON table, and updates those shared parameters in place
while it does (`validator_params = base_item["params"]; validator_params.update(...)`,
`validator_params["plotly_name"] = prop_name`): two threads building validators at once can each get a
validator made with the other's parameters. Seen on a fresh server with eight sessions opening together:
"Invalid property specified for object of type plotly.graph_objs.Scatter: 'colorbar'" on a page that builds
heatmaps (not reproduced in isolation). `serialise_validators()` wraps it in a lock; once built, a validator is
a dictionary lookup, so a figure's many lookups each hold the lock only for that lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_lock = threading.Lock()


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
