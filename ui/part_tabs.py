"""A page's parts as tabs kept in the URL (?<key>=<part>), of which only the open one is drawn.

Why: the browser draws every plotly figure a run sends before it paints the first, so a page of many figures
kept its first one waiting for the rest (seconds on a 2-core machine). A page in tabs sends the open tab's
figures only; the others are drawn when opened, which reruns the page.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.i18n import t


def part_tabs(parts: dict[str, str], key: str) -> dict[str, Any]:
    """The tab containers by part (`parts`: part's name → its label's message id, the first the default); each
    has `.open`, True for the one tab to draw. The URL holds the part's language-independent name, so a link opens
    the same tab in English and Korean (the widget's own state is its translated label); the first part needs no
    parameter, and an unknown one opens the first."""
    first = next(iter(parts))
    labels = {part: t(label) for part, label in parts.items()}
    wanted = st.query_params.get(key, first)
    tabs = st.tabs(
        list(labels.values()),
        key=key,
        on_change="rerun",
        default=labels[wanted if wanted in parts else first],
    )
    by_part = dict(zip(parts, tabs, strict=True))
    opened = next((part for part, tab in by_part.items() if tab.open), first)
    if opened == first:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = opened
    return by_part
