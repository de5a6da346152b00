"""Heads: what happens when a head is switched off, which heads matter, where information flows, and what
role each head plays — on the live model.

One view at a time, chosen at the top and kept in the URL (?h_view=roles): each view runs only when shown, so
a click reruns one section's work (tabs would run every section on every rerun)."""

from __future__ import annotations

import streamlit as st

from ui.heads.alignment import alignment_heads_section
from ui.heads.controls import ablate_section, flow_section, heads_controls
from ui.heads.importance import importance_section
from ui.heads.paper_figures import paper_figures_section
from ui.heads.replay import replay_section
from ui.heads.roles import roles_section
from ui.heads.views import VIEWS
from ui.i18n import t
from ui.layout import controls, page_header
from ui.model_cache import require_model
from ui.urlstate import bound_choice

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

view = bound_choice(
    st.segmented_control,
    t("View"),
    VIEWS,
    "h_view",
    "ablate",
    required=True,
    label_visibility="collapsed",
)
choice = heads_controls(controls(), checkpoint)
if view == "ablate":
    ablate_section(selection, checkpoint, choice)
elif view == "importance":
    importance_section(selection.path, selection.version, checkpoint.config)
elif view == "flow":
    flow_section(selection, choice.sentence)
elif view == "roles":
    roles_section(selection, checkpoint, choice.sentence or None)
    alignment_heads_section(selection, checkpoint, choice.sentence or None)
elif view == "replay":
    replay_section(selection.path, checkpoint)
else:
    paper_figures_section(selection, checkpoint)
