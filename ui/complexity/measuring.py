"""Timing the layers of Table 1 on this machine with a progress bar, for the Complexity page and the tour."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from explorer.complexity.measure import measure_layers
from ui.i18n import t


def measure_with_bar(ns: Sequence[int], d: int, **options: Any) -> list[dict[str, Any]]:
    """`measure_layers(ns, d, **options)` under a progress bar that is removed when the timing ends."""
    bar = st.progress(0.0, text=t("Measuring\u2026"))

    def report(done: float, what: str) -> None:
        bar.progress(done, text=what)

    rows = measure_layers(ns, d, progress=report, **options)
    bar.empty()
    return rows
