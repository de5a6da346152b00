"""Additive attention beside the dot product (Section 3.2.1): the followed query scored both ways, the additive
network's seeded weights, both timed on this machine, and which one saturates as d_k grows. The trend and the
timing are also the tour's (stop 2)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.analysis.additive import (
    ATTENTION_DIM,
    SCORINGS,
    Timing,
    compare_query,
    saturation_curve,
    seeded_weights,
    time_scores,
)
from explorer.figures.memo import remembered
from explorer.figures.paper_live import additive_query_figure, additive_saturation_figure
from explorer.tour.tables import leading_columns
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import section_header
from ui.step_by_step.choice import Followed

SATURATION_D_KS = (1, 4, 16, 64, 256, 1024)
SATURATION_KEYS = 10
TIMED_LENGTHS = (16, 64, 256)
WEIGHT_SEED = 0

# Built once per distinct input (explorer/figures/memo.py): every visit of this page and of the tour's stop 2
# draws the same saturation curve, and the query's bars change only with the followed query.
query_figure = remembered()(additive_query_figure)
saturation_figure = remembered()(additive_saturation_figure)


@st.cache_data(show_spinner=False, max_entries=4)
def saturation_series(n_keys: int) -> tuple[list[int], dict[str, list[float]], dict[str, list[float]]]:
    rows = saturation_curve(SATURATION_D_KS, n_keys=n_keys)
    return (
        [r.d_k for r in rows],
        {s: [r.max_weight[s] for r in rows] for s in SCORINGS},
        {s: [r.entropy[s] for r in rows] for s in SCORINGS},
    )


@st.cache_data(show_spinner=False, max_entries=8, ttl=15 * 60)
def timings(d_k: int) -> list[Timing]:
    """Measured once per d_k for every browser tab, again after 15 minutes (the machine's load moves)."""
    return time_scores(TIMED_LENGTHS, d_k, repeats=20)


def additive_trend(prefix: str, d_k: int) -> None:
    """The timing table and the saturation curve of the three scorings."""
    lang = current_language()
    st.dataframe(
        [
            {
                "n": r.n,
                t("dot product (ms)"): round(r.dot_s * 1000, 3),
                t("additive (ms)"): round(r.additive_s * 1000, 3),
                t("additive / dot"): round(r.ratio, 1),
            }
            for r in timings(d_k)
        ],
        hide_index=True,
    )
    st.caption(
        t(
            "All n \u00d7 n scores of one head at d_k = {d_k}, d_a = {d_a}, on this machine's CPU (best of 20). Both "
            "cost O(n\u00b2\u00b7d); the dot product is one matrix product, the additive score builds a "
            "d_a-vector and a tanh for every pair.",
            d_k=d_k,
            d_a=ATTENTION_DIM,
        )
    )
    d_ks, max_weight, entropy = saturation_series(SATURATION_KEYS)
    show_figure(
        saturation_figure(d_ks, max_weight, entropy, n_keys=SATURATION_KEYS, lang=lang),
        t("Additive attention"),
        key=f"{prefix}_additive_saturation",
        downloads=False,
    )
    st.caption(
        t(
            "Unscaled q\u00b7k saturates: its largest weight tends to 1 as d_k grows. W\u2081q + W\u2082k keeps "
            "its size and tanh bounds it, so additive attention does not saturate; dividing by \u221ad_k gives "
            "the dot product the same property and keeps its speed. That is the paper's choice."
        )
    )


def additive_section(followed: Followed) -> None:
    """The followed query scored by the seeded additive network beside the head's own weights."""
    section_header(
        t("Additive attention instead?"),
        t(
            "Section 3.2.1 compares dot-product attention with **additive attention**, a small feed-forward "
            "network: score(q, k) = v\u1d40 tanh(W\u2081q + W\u2082k). Here it scores the same query and keys as "
            "above, with weights drawn at random (seed {seed}), not trained: the point is how it computes, not "
            "what it learned.",
            seed=WEIGHT_SEED,
        ),
    )
    steps = followed.steps
    weights = seeded_weights(steps.d_k, seed=WEIGHT_SEED)
    compared = compare_query(steps.q, steps.keys, steps.allowed, weights)
    show_figure(
        query_figure(steps.key_pieces, compared.dot_weights, compared.additive_weights, lang=current_language()),
        t("Additive attention"),
        key="sbs_additive_query",
        downloads=False,
    )
    st.dataframe(
        [
            {
                t("key"): piece,
                "q\u00b7k/\u221ad_k": round(float(compared.scaled_dot[j]), 3),
                "v\u1d40tanh(W\u2081q+W\u2082k)": round(float(compared.additive[j]), 3),
            }
            for j, piece in enumerate(steps.key_pieces)
        ],
        hide_index=True,
    )
    with st.expander(
        t(
            "The additive weights: W\u2081, W\u2082 ({d_a} \u00d7 {d_k}) and v ({d_a}), first entries",
            d_a=ATTENTION_DIM,
            d_k=steps.d_k,
        )
    ):
        st.dataframe(
            {
                **leading_columns(weights.w1, 4, 3, "W\u2081"),
                **leading_columns(weights.w2, 4, 3, "W\u2082"),
                "v": np.round(weights.v, 3),
            },
            hide_index=True,
            height=240,
        )
    additive_trend("sbs", steps.d_k)
