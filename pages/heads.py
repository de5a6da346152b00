"""Heads: what happens when a head is switched off, which heads matter, where information flows, and what
role each head plays — on the live model."""

from __future__ import annotations

import streamlit as st

from ui.heads.controls import ablate_section, flow_section, heads_controls
from ui.heads.importance import importance_section
from ui.heads.paper_figures import paper_figures_section
from ui.heads.replay import replay_section
from ui.heads.roles import roles_section
from ui.i18n import t
from ui.layout import controls, page_header
from ui.model_cache import require_model

selection, checkpoint = require_model()

page_header(
    t("Heads: ablation & roles"),
    t(
        "A heatmap shows where a head looks, not whether it matters. Switch heads off and watch the translation "
        "change; see which heads the model needs most; follow information through all layers; and read each "
        "head's role with the sentences that show it. In links, tables and on the command line heads are named "
        "`FAMILY.LAYER.HEAD`, counted from 0; the page's labels and figures count from 1."
    ),
)

ablate, importance, flow, roles, replay, paper = st.tabs(
    [
        t("Switch heads off"),
        t("Which heads matter"),
        t("Information flow"),
        t("Head roles"),
        t("Training replay"),
        t("Paper's Figures 3–5"),
    ]
)
choice = heads_controls(controls(), checkpoint)
with ablate:
    ablate_section(selection, checkpoint, choice)
with importance:
    importance_section(selection.path, selection.version, checkpoint.config)
with flow:
    flow_section(selection, choice.sentence)
with roles:
    roles_section(selection, checkpoint, choice.sentence or None)
with replay:
    replay_section(selection.path, checkpoint)
with paper:
    paper_figures_section(selection, checkpoint)
