"""Translate's result: the line translated sentence by sentence, the translation card, a note when the input is
mostly unknown to the model's vocabulary, what the no-repeat constraint changed, and the pick of the sentence
whose attention is shown."""

from __future__ import annotations

import streamlit as st

from explorer.checkpoint import source_language
from explorer.config import ModelConfig
from explorer.inference import NoTranslationError, Translation
from explorer.text.sentences import join_sentences, split_sentences
from ui.attention_controls import sentence_picker, show_translations
from ui.i18n import t
from ui.markdown import md_escape
from ui.model_cache import load_model, translate_for
from ui.model_picker import Selection
from ui.translate.decoding import Decoding


def translation_section(selection: Selection, config: ModelConfig, sentence: str, decoding: Decoding) -> Translation:
    """Translate `sentence` with the page's search and show it; the translation whose attention the page shows
    next (one sentence of a line of several: each is translated on its own, in one batch, and the
    translations are joined)."""
    parts = split_sentences(sentence) or [sentence]
    try:
        translations = translate_for(selection, parts, with_attention=True, **decoding.options)
    except NoTranslationError as error:
        st.error(t("Translation failed: {error}", error=md_escape(str(error))), icon=":material/error:")
        st.stop()
    show_translations(translations, config.max_len, how=decoding.how(), source=True)
    note_unknown_input(selection, translations)
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


def note_unknown_input(selection: Selection, translations: list[Translation]) -> None:
    """A warning when most of the input's pieces are unknown to the vocabulary (Korean into an English→German
    model): the translation is then made of guesses, however fluent it looks."""
    share = max(tr.unknown_share for tr in translations)
    if not any(tr.mostly_unknown for tr in translations):
        return
    language = source_language(load_model(selection.path, selection.device, selection.version).metadata)
    shown = f"{share:.0%}"
    if language == "en":
        message = t(
            "This model reads English, and most of this sentence ({share} of its pieces) is unknown to its "
            "vocabulary: the translation is likely meaningless.",
            share=shown,
        )
    else:
        message = t(
            "Most of this sentence ({share} of its pieces) is unknown to the model's vocabulary: it is probably in "
            "a language the model was not trained on, and the translation is likely meaningless.",
            share=shown,
        )
    st.warning(message, icon=":material/translate:")
