"""A least-recently-used cache bounded by memory, for translations and attention maps.

`st.cache_data` bounds a cache by entry count, but one long sentence with every attention map can hold
many megabytes, so a count says little about memory. Here each entry's size is the sum of the `nbytes` of
the numpy arrays (and torch tensors) it holds, measured when it is stored; the oldest entries are dropped
until everything fits the budget, and an entry older than `ttl_s` is recomputed (a checkpoint that was
re-trained under the same name also changes the key, through the weights' version).

Texts and beam traces are small Python objects, not arrays (a 10-beam trace of a 120-token sentence pickles
to about 50 KB); every entry counts as at least `min_entry_bytes` (64 KB), so many small entries are bounded too.

One cache per process, shared by every session (cached values are read-only). No streamlit here.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
MB = 1024 * 1024


def nbytes(value: Any, _seen: set[int] | None = None) -> int:
    """Bytes held by the arrays inside `value` (dataclasses, lists, tuples, dicts walked recursively)."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if hasattr(value, "element_size") and hasattr(value, "nelement"):  # a torch tensor
        return int(value.element_size() * value.nelement())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return sum(nbytes(v, seen) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v, seen) for v in value)
    return 0


class MemoryBoundedCache:
    """key -> value, at most `budget_bytes` of arrays in all; thread-safe."""

    def __init__(
        self,
        budget_bytes: int,
        ttl_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        min_entry_bytes: int = 64 * 1024,
    ):
        self.budget_bytes, self.ttl_s, self._clock = budget_bytes, ttl_s, clock
        self.min_entry_bytes = min_entry_bytes
        self._entries: OrderedDict[Hashable, tuple[Any, int, float]] = OrderedDict()  # value, bytes, stored at
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and (self.ttl_s is None or self._clock() - hit[2] < self.ttl_s):
                self._entries.move_to_end(key)
                return hit[0]
        value = compute()  # outside the lock: other sessions keep reading while this one computes
        self.put(key, value)
        return value

    def entry_bytes(self, value: Any) -> int:
        """What `value` counts against the budget: its arrays' bytes, at least `min_entry_bytes`."""
        return max(nbytes(value), self.min_entry_bytes)

    def put(self, key: Hashable, value: Any) -> None:
        size = self.entry_bytes(value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size > self.budget_bytes:
                return  # larger than the whole budget: returned to the caller, never kept
            self._entries[key] = (value, size, self._clock())
            self._bytes += size
            while self._bytes > self.budget_bytes:
                _, (_, dropped, _) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
