"""The Heads page's sidebar (the sentence every tab uses; how a head is switched off, the search, and the
family and layer redrawn, for the first tab) and the tabs that need no module of their own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.model.head_mask import MASK_MODES, family_layers
from explorer.paper import HEAD_FAMILIES, HEAD_FAMILY_TITLES
from ui.attention_controls import choice_list, number_picker, sentence_input, weighting_switch
from ui.explain.compute import explained_for
from ui.heads.ablation import (
    MODES,
    ablated_translation,
    head_mask_grid,
    mask_in_mode,
    remaining_heads,
    show_side_by_side,
)
from ui.heads.rollout import rollout_section
from ui.i18n import t
from ui.layout import COLUMN_GAP_PX, figure_column_px
from ui.model_cache import translate_for
from ui.model_picker import Selection
from ui.urlstate import bound_buttons, bound_choice

BEAMS = (1, 4)
FIGURE_SHARE = 0.66  # of the main area: the remaining heads' figure; the switches of its family beside it


@dataclass(frozen=True)
class AblationChoice:
    sentence: str  # '' while the box is empty
    mode: str  # a key of MODES: what a switched-off head outputs
    beam: int
    family: str  # one of HEAD_FAMILIES
    layer: int  # 0-based


def heads_controls(side: Any, checkpoint: Checkpoint) -> AblationChoice:
    """The sidebar's controls, each kept in the URL; the sentence is every tab's, the rest the first tab's."""
    config = checkpoint.config
    with side:
        sentence = sentence_input("h_sentence", checkpoint.metadata, default=st.session_state.get("sentence"))
        mode = bound_choice(
            st.segmented_control,
            t("A switched-off head outputs"),
            MASK_MODES,
            "h_mode",
            "zero",
            required=True,
            format_func=lambda m: t(MODES[m]),
            help=t(
                "Zero: the head's output is removed before W^O (Michel et al., 2019). Mean: "
                "it is replaced by its average output over reference sentences, which "
                "keeps the input of W^O at its usual scale."
            ),
        )
        beam = bound_buttons(
            st.segmented_control,
            t("Search"),
            BEAMS,
            "h_beam",
            1,
            required=True,
            format_func=lambda k: t("greedy") if k == 1 else t("beam {k}", k=k),
        )
        family = choice_list(
            t("Attention family"), {f: HEAD_FAMILY_TITLES[f] for f in HEAD_FAMILIES}, "h_family", "cross"
        )
        layers = family_layers(config, family)
        layer = number_picker("Layer", "h_layer", layers, default=layers) - 1
    return AblationChoice(sentence, str(mode), int(beam), family, layer)


@st.fragment
def ablate_section(selection: Selection, checkpoint: Checkpoint, choice: AblationChoice) -> None:
    """The translation with every head on beside the one with the unticked heads off, and the heads left on.

    A fragment: a head ticked or unticked (or the weighting switched) reruns this section, not the page. Nothing
    outside it reads the head mask, and the grid writes the mask to the URL (?heads=) on every run of its own,
    so a reload with the link shows the same heads off."""
    # On the first screen: the two translations, then the figure with the switches of the family it shows beside
    # it; untick a head and watch both change without scrolling. The other families' switches follow below.
    results = st.container()
    figure, switches = st.columns([FIGURE_SHARE, 1 - FIGURE_SHARE], gap="medium")
    st.markdown(t("Untick a head to switch it off; the link keeps the choice."))
    mask = head_mask_grid(checkpoint.config, placed={choice.family: switches.container(border=True)})
    if not choice.sentence:
        results.info(t("Type a sentence above, or click an example."), icon=":material/keyboard:")
        return
    original = translate_for(selection, [choice.sentence], beam_size=choice.beam, with_attention=True)[0]
    changed = ablated_translation(selection, original, mask, choice.mode, beam_size=choice.beam)
    with results:
        show_side_by_side(original, changed, mask)
    weighting = weighting_switch(where=switches)
    # Value-weighted: the ablated translation's own, with the same heads off as it was decoded with.
    explained = None
    if weighting != "raw":
        explained = explained_for(selection, changed, mask_in_mode(selection, mask, choice.mode))
    with figure:
        width = figure_column_px(FIGURE_SHARE, COLUMN_GAP_PX)
        remaining_heads(changed, mask, choice.family, choice.layer, width=width, explained=explained)


def flow_section(selection: Selection, sentence: str) -> None:
    """Information flow through every layer (attention rollout) of the sidebar's sentence."""
    if not sentence:
        st.info(t("Type a sentence in the first tab."), icon=":material/keyboard:")
        return
    rollout_section(translate_for(selection, [sentence], with_attention=True)[0])
