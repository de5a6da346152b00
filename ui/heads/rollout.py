"""Where information flows: attention rollout through every layer next to the top layer's cross-attention,
with a sentence on where they disagree."""

from __future__ import annotations

import streamlit as st

from explorer.analysis.rollout import disagreements, last_layer_cross, output_attribution
from explorer.figures.heads import rollout_comparison
from explorer.inference import Translation
from explorer.text.pieces import shown_pieces
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.markdown import md_escape

MAX_SENTENCES = 4


def rollout_section(translation: Translation) -> None:
    st.markdown(
        t(
            "A layer attends to the previous layer's states, which are already mixtures of the input. **Rollout** "
            "(Abnar & Zuidema, 2020) follows the mixing down to the source words: each sub-layer counts as half "
            "residual and half attention (0.5·I + 0.5·A), multiplied through the encoder, the decoder's "
            "self-attention and the cross-attention of every layer."
        )
    )
    att = translation.attention
    assert att is not None, "the translation needs its attention"
    flow = output_attribution(att.encoder_self, att.decoder_self, att.cross)
    plain = last_layer_cross(att.cross)
    outputs, sources = shown_pieces(translation.target_output_pieces), shown_pieces(translation.source_pieces)
    figure = rollout_comparison(flow, plain, outputs, sources, lang=current_language())
    show_figure(figure, "rollout vs cross-attention", key="heads_rollout")
    differ = disagreements(flow, plain)
    if not differ:
        st.markdown(t("Here they agree: for every output token the strongest source token is the same in both."))
        return
    lines = [
        t(
            "For **{output}** the top layer looks most at **{plain}**, the flow through all layers at **{flow}**.",
            output=md_escape(outputs[row]),
            plain=md_escape(sources[b]),
            flow=md_escape(sources[a]),
        )
        for row, a, b in differ[:MAX_SENTENCES]
    ]
    st.markdown(
        t("They differ for {n} of {total} output tokens.", n=len(differ), total=len(outputs)) + " " + " ".join(lines)
    )
