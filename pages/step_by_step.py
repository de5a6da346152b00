"""Attention step by step (Section 3.2, Eq. 1): one head, one query, every stage with the loaded model's numbers
(scores to weights, then weights to output); why the scores are divided by √d_k (Section 3.2.1); and additive
attention on the same query, one tab each."""

from __future__ import annotations

import streamlit as st

from ui.model_cache import require_model
from ui.part_tabs import part_tabs
from ui.step_by_step.additive import additive_section
from ui.step_by_step.choice import follow_section, intro
from ui.step_by_step.scaling import why_sqrt_dk
from ui.step_by_step.stages import (
    agreement_section,
    heads_section,
    next_part_note,
    projections_section,
    scores_section,
    weighted_sum_section,
)

selection, checkpoint = require_model()
intro()
followed = follow_section(selection, checkpoint)
if followed is None:
    st.stop()
parts = part_tabs("sbs_part")
if parts["stages"].open:
    with parts["stages"]:
        projections_section(followed)
        scores_section(followed)
        next_part_note()
if parts["output"].open:
    with parts["output"]:
        weighted_sum_section(followed)
        heads_section(followed)
        agreement_section(followed)
if parts["scaling"].open:
    with parts["scaling"]:
        why_sqrt_dk()
if parts["additive"].open:
    with parts["additive"]:
        additive_section(followed)
