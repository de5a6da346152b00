"""The pages whose parts are tabs kept in the URL (?<key>=<part>), of which only the open one is drawn: Step by
step, Positional encoding and Complexity.

Why: the browser draws every plotly figure a run sends before it paints the first, so a page of many figures kept
its first one waiting for the rest. Measured on a 2-core AMD EPYC (`python -m benchmarks.browser_pages --pages …`,
warm visits, p50): Step by step's Eq. 1 whole in one tab 2.9 s to its first figure, in two tabs 1.3 s; Positional
1.6-2.3 s as one page, 0.9 s in tabs; Complexity 1.2-1.5 s, 0.6 s once the path-length figure had a tab of its own.
A tab's figures are drawn when it is opened, which reruns the page.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.i18n import t

# The page's URL parameter -> its parts (part's name -> its tab's label, a message id), the first the default.
PARTS: dict[str, dict[str, str]] = {
    "sbs_part": {  # Step by step: Eq. 1 for the followed query in two halves, why √d_k, additive attention
        "stages": "Eq. 1: scores to weights",
        "output": "Eq. 1: weights to output",
        "scaling": "Why divide by √d_k?",
        "additive": "Additive attention instead?",
    },
    "pe_part": {  # Positional encoding
        "encoding": "The sinusoids",
        "similarity": "Similarity and shift",
        "input": "Position in the model's input",
        "word_order": "Word order",
    },
    "complexity_part": {  # Complexity (Table 1)
        "table": "Table 1",
        "measured": "Measured on this machine",
        "path": "Maximum path length",
    },
}


def part_tabs(key: str) -> dict[str, Any]:
    """The tab containers of the page whose URL parameter is `key`, by part; each has `.open`, True for the one
    tab to draw. The URL holds the part's language-independent name, so a link opens the same tab in English and
    Korean (the widget's own state is its translated label); the first part needs no parameter, and an unknown
    one opens the first."""
    parts = PARTS[key]
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
