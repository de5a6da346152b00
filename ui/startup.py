"""Import the heavy libraries the pages use once, before any page runs.

Streamlit runs each browser session's script in its own thread. When several sessions open at once on a
fresh server (a class opening the link together), each thread would be the first to import pandas,
plotly or altair; a thread can then see a partly initialised module and fail. The frame calls
`preload_libraries()` first: the first session imports everything under a lock, the others wait for it.
This module itself imports nothing heavy, so importing it concurrently is safe.
"""

from __future__ import annotations

import importlib
import threading

LIBRARIES = ("numpy", "pandas", "pyarrow", "plotly.graph_objects", "plotly.io", "torch")
_lock = threading.Lock()
_done = False


def preload_libraries(names: tuple[str, ...] = LIBRARIES) -> None:
    global _done
    if _done:
        return
    with _lock:
        if not _done:
            for name in names:
                importlib.import_module(name)
            _done = True
