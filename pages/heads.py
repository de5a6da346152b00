"""Heads: what happens when a head is switched off, which heads matter, where information flows, and what
role each head plays — on the live model."""

from __future__ import annotations

import streamlit as st

from explorer.model.head_mask import family_layers
from explorer.paper import HEAD_FAMILIES, HEAD_FAMILY_TITLES
from ui.attention_controls import choice_list, number_picker, sentence_input
from ui.heads_ablation import (
    MODES,
    ablated_translation,
    head_mask_grid,
    remaining_heads,
    show_side_by_side,
)
from ui.heads_importance import importance_section
from ui.heads_replay import replay_section
from ui.heads_roles import roles_section
from ui.heads_rollout import rollout_section
from ui.i18n import t
from ui.layout import controls, page_header
from ui.model_cache import require_model, translate_for
from ui.urlstate import sync_to_url, url_default

BEAMS = (1, 4)

selection, checkpoint = require_model()
config = checkpoint.config

page_header(
    t("Heads: ablation & roles"),
    t(
        "A heatmap shows where a head looks, not whether it matters. Switch heads off and watch the translation "
        "change; see which heads the model needs most; follow information through all layers; and read each "
        "head's role with the sentences that show it. In links, tables and on the command line heads are named "
        "`FAMILY.LAYER.HEAD`, counted from 0; the page's labels and figures count from 1."
    ),
)

ablate, importance, flow, roles, replay = st.tabs(
    [t("Switch heads off"), t("Which heads matter"), t("Information flow"), t("Head roles"), t("Training replay")]
)

side = controls()
with side:  # the sentence is every tab's; the rest are the first tab's
    sentence = sentence_input("h_sentence", checkpoint.metadata, default=st.session_state.get("sentence"))
    url_default("h_mode", "zero", allowed=tuple(MODES))
    mode = st.segmented_control(
        t("A switched-off head outputs"),
        tuple(MODES),
        key="h_mode",
        required=True,
        format_func=lambda m: t(MODES[m]),
        help=t(
            "Zero: the head's output is removed before W^O (Michel et al., 2019). Mean: "
            "it is replaced by its average output over reference sentences, which "
            "keeps the input of W^O at its usual scale."
        ),
    )
    beam = st.segmented_control(
        t("Search"),
        BEAMS,
        key="h_beam",
        required=True,
        default=None if "h_beam" in st.session_state else 1,
        bind="query-params",
        format_func=lambda k: t("greedy") if k == 1 else t("beam {k}", k=k),
    )
    sync_to_url("h_mode")
    url_default("h_family", "cross", allowed=HEAD_FAMILIES)
    family = choice_list(t("Attention family"), {f: HEAD_FAMILY_TITLES[f] for f in HEAD_FAMILIES}, "h_family")
    sync_to_url("h_family")
    layer = number_picker("Layer", "h_layer", family_layers(config, family), default=family_layers(config, family)) - 1

with ablate:
    # The translations and the figure first (on the first screen), the head switches under them; the switches
    # are read first, so the figure's place is kept by an empty container.
    results = st.container()
    st.markdown(t("Untick a head to switch it off; the link keeps the choice."))
    mask = head_mask_grid(config)
    if not sentence:
        results.info(t("Type a sentence above, or click an example."), icon=":material/keyboard:")
    else:
        original = translate_for(selection, [sentence], beam_size=beam, with_attention=True)[0]
        changed = ablated_translation(selection, sentence, mask, beam_size=beam, mode=mode)
        with results:
            show_side_by_side(original, changed, mask)
            remaining_heads(changed, mask, family, layer)

with importance:
    importance_section(selection.path, selection.version, config)

with flow:
    text = st.session_state.get("h_sentence") or ""
    if not text.strip():
        st.info(t("Type a sentence in the first tab."), icon=":material/keyboard:")
    else:
        rollout_section(translate_for(selection, [text.strip()], with_attention=True)[0])

with roles:
    roles_section(selection, checkpoint, (st.session_state.get("h_sentence") or "").strip() or None)


with replay:
    replay_section(selection.path, checkpoint)
