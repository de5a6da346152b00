"""Translate & attention: translate a sentence (or a file of them) and look at every layer and head of the
three attention families the paper's Transformer uses (Section 3.2.3)."""

from __future__ import annotations

import streamlit as st

from ui.heads.ablation import ablation_expander
from ui.i18n import t
from ui.layout import controls, page_header
from ui.model_cache import require_model
from ui.room import ask_the_class
from ui.translate.alignment import alignment_expander
from ui.translate.attention import attention_section, view_controls
from ui.translate.batch import upload_section
from ui.translate.decoding import decoding_controls
from ui.translate.result import translation_section
from ui.translate.source import input_choice, typed_sentence

selection, checkpoint = require_model()

page_header(
    t("Translate & attention"),
    t(
        "Type a sentence and the model translates it; then look inside. Every layer has several attention "
        "**heads**, each a matrix of weights: row *i* says how much the token at position *i* (the **query**) "
        "looks at every other token (the **keys**); each row sums to 1 (Eq. 1, softmax(QKᵀ/√dₖ)V)."
    ),
)

side = controls()
source = input_choice(side)
decoding = decoding_controls(side, checkpoint)
if source == "type":
    sentence = typed_sentence(side, checkpoint)
else:
    sentence = upload_section(selection, checkpoint, decoding.options)
if sentence is None:
    st.stop()
translation = translation_section(selection, checkpoint.config, sentence, decoding)
view = view_controls(side)
attention_section(selection, translation, view)
alignment_expander(selection, checkpoint, sentence, view)
ablation_expander(selection, checkpoint.config, translation, beam_size=decoding.beam, alpha=decoding.alpha)
ask_the_class(translation)  # presenter mode with a room open: the head on screen as a question for every phone
