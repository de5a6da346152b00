"""The page's three parts as tabs kept in the URL (?sbs_part=scaling): Eq. 1 stage by stage for the followed
query, why the scores are divided by √d_k, and additive attention. Only the open tab is drawn: the browser
draws every plotly figure a run sends before the page settles, so sixteen figures on one page kept the first
one waiting for the rest (seconds on a 2-core machine)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.i18n import t

PARTS = {
    "stages": "Eq. 1, stage by stage",
    "scaling": "Why divide by √d_k?",
    "additive": "Additive attention instead?",
}
PART_KEY = "sbs_part"


def part_tabs() -> dict[str, Any]:
    """The tab containers by part; each has `.open`, True for the one tab to draw. The URL holds the part's
    language-independent name, so a link opens the same tab in English and Korean (the widget's own state is
    its translated label)."""
    labels = {part: t(label) for part, label in PARTS.items()}
    wanted = st.query_params.get(PART_KEY, "stages")
    tabs = st.tabs(
        list(labels.values()),
        key=PART_KEY,
        on_change="rerun",
        default=labels[wanted if wanted in PARTS else "stages"],
    )
    by_part = dict(zip(PARTS, tabs, strict=True))
    opened = next((part for part, tab in by_part.items() if tab.open), "stages")
    if opened == "stages":
        st.query_params.pop(PART_KEY, None)
    else:
        st.query_params[PART_KEY] = opened
    return by_part
