"""The page's four parts as tabs kept in the URL (?sbs_part=output): Eq. 1 for the followed query in two halves
(its query, keys and values to the weights; the weights to the head's output and W^O), why the scores are
divided by √d_k, and additive attention. Only the open tab is drawn: the browser draws every plotly figure a
run sends before it paints the first, so sixteen figures on one page kept the first one waiting for the rest
(seconds on a 2-core machine), and Eq. 1 whole in one tab took 2.9 s to its first figure, split in two 1.3 s
(p50, `python -m benchmarks.browser_pages --pages step_by_step --languages en --runs 15`, a 2-core AMD EPYC)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import part_tabs as tabs
from ui.i18n import t

PARTS = {
    "stages": "Eq. 1: scores to weights",
    "output": "Eq. 1: weights to output",
    "scaling": "Why divide by √d_k?",
    "additive": "Additive attention instead?",
}
PART_KEY = "sbs_part"


def part_tabs() -> dict[str, Any]:
    """The page's tab containers by part (ui/part_tabs.py)."""
    return tabs.part_tabs(PARTS, PART_KEY)


def next_part_note() -> None:
    """Under Eq. 1's first half: where its second half is (a tab, so not drawn until opened)."""
    st.caption(t("Next, the weights times the values: the tab “{tab}” above.", tab=t(PARTS["output"])))
