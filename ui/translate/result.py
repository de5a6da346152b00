"""Translate's result: the line translated sentence by sentence, the translation card, what the no-repeat
constraint changed, and the pick of the sentence whose attention is shown."""

from __future__ import annotations

import streamlit as st

from explorer.config import ModelConfig
from explorer.inference import Translation
from explorer.text.sentences import join_sentences, split_sentences
from ui.attention_controls import sentence_picker, show_translations
from ui.i18n import t
from ui.markdown import md_escape
from ui.model_cache import translate_for
from ui.model_picker import Selection
from ui.translate.decoding import Decoding


def translation_section(selection: Selection, config: ModelConfig, sentence: str, decoding: Decoding) -> Translation:
    """Translate `sentence` with the page's search and show it; the translation whose attention the page shows
    next (one sentence of a line of several: each is translated on its own, in one batch, and the
    translations are joined)."""
    parts = split_sentences(sentence) or [sentence]
    translations = translate_for(selection, parts, with_attention=True, **decoding.options)
    show_translations(translations, config.max_len, how=decoding.how())
    if decoding.no_repeat:
        plain = translate_for(selection, parts, with_attention=False, beam_size=decoding.beam, alpha=decoding.alpha)
        before = join_sentences(tr.output for tr in plain)
        if before != join_sentences(tr.output for tr in translations):
            st.info(
                t("Without the constraint the search gives: {output}", output=md_escape(before)),
                icon=":material/compare_arrows:",
            )
        else:
            st.caption(t("The constraint changes nothing here: the search without it gives the same translation."))
    return translations[sentence_picker("part", parts)] if len(parts) > 1 else translations[0]
