"""A one-chart Streamlit script for tests/browser/test_linked_heads.py: the linked layer x head grid of
ui/linked_heads.py on fixed weights (3 layers, 4 heads, 6 tokens), in the translate page's figure column.

The app's own grid lives on the Translate page; this script lets the browser test check the facet grid's
hover linking on its own, with weights whose every row is known.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `streamlit run tests/...` puts tests/ first

from ui.linked_heads import show_linked_grid  # noqa: E402

TOKENS = ["A", "man", "rides", "a", "bike", "."]
weights = np.random.default_rng(0).random((3, 4, len(TOKENS), len(TOKENS)))
weights /= weights.sum(-1, keepdims=True)  # (layers, heads, q, k), rows sum to one like attention
_, column = st.columns((1, 3))
with column:
    show_linked_grid(
        weights, TOKENS, TOKENS, key="grid", title="Encoder self-attention: all layers and heads", share=0.75
    )
