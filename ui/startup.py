"""What the server does once, before any page runs: import the heavy libraries, and remove what servers that were
killed left behind.

Streamlit runs each browser session's script in its own thread. When several sessions open at once on a
fresh server (a class opening the link together), each thread would be the first to import pandas,
plotly or altair; a thread can then see a partly initialised module and fail. The frame calls `start_up()`
first: the first page run does the work under a lock, the others wait for it. This module itself imports
nothing heavy, so importing it concurrently is safe.

Left behind by a killed server: checkpoint upload folders of sessions that never ended (ui/uploads.py), and
prepared uploads nobody has used for a day (explorer/data/prepare.py).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable

from explorer.runtime import configure_for

LIBRARIES = ("numpy", "pandas", "pyarrow", "plotly.graph_objects", "plotly.io", "torch")
_lock = threading.Lock()
_done: set[str] = set()


def _once(name: str, work: Callable[[], None]) -> None:
    if name in _done:
        return
    with _lock:
        if name not in _done:
            work()
            _done.add(name)


def preload_libraries(names: tuple[str, ...] = LIBRARIES) -> None:
    def load() -> None:
        # Before torch loads: the OpenMP runtime reads its settings once (explorer/runtime.py measures why the app
        # serves each request on one thread). Deciding samples the machine's load for about 11 ms.
        if "torch" not in sys.modules:
            configure_for("app")
        for name in names:
            importlib.import_module(name)

    _once("libraries", load)


def remove_leftovers() -> None:
    """Stale upload folders and prepared uploads, removed once per server process."""

    def remove() -> None:
        from explorer.data import prepare
        from ui.uploads import remove_stale_folders

        remove_stale_folders()
        prepare.prune(stale_after_s=prepare.STALE_AFTER_S)

    _once("leftovers", remove)


def start_up() -> None:
    preload_libraries()
    remove_leftovers()
