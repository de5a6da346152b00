"""Beam search (Section 6.1): the search as a tree, step by step, the n-best list beside greedy decoding, and the
cross-attention of any hypothesis."""

from __future__ import annotations

import streamlit as st

from ui.beam.example import beam_sentence
from ui.beam.hypothesis import attention_section, chosen_hypothesis, hypothesis_picker, nbest_list, nbest_section
from ui.beam.search import outputs_section, score_formula, search_controls, search_section, verdict
from ui.beam.tree import picked_tokens, step_view
from ui.i18n import t
from ui.layout import controls, page_header
from ui.model_cache import require_model

selection, checkpoint = require_model()

page_header(
    t("Beam search"),
    t(
        "Greedy decoding keeps the single most probable next token. Beam search keeps the **k** best partial "
        "translations at every step, extends each by every token, ranks the 2k best continuations by total "
        "log-probability and keeps k of them; a continuation ending in </s> is set aside as finished. The paper "
        "used k = 4, a length penalty α = 0.6 and a maximum output length of input length + 50 (Section 6.1). "
        "Finished hypotheses are ranked by their length-normalised score (GNMT's penalty):"
    ),
    formula=score_formula(checkpoint.config.length_normalisation),
)
if checkpoint.config.length_normalisation == "power":
    st.caption(t("This model ranks by log P(Y | X) / |Y|^α instead: Marian's and Hugging Face's length penalty."))

side = controls()
choice = search_controls(side, checkpoint, beam_sentence(selection))
if choice is None:
    st.stop()
searched = search_section(selection, choice)
rows = nbest_list(searched, checkpoint.tokenizer)
clicked = picked_tokens(searched)  # a node clicked in the tree, else the hypothesis picked in the list
tokens = clicked if clicked is not None else chosen_hypothesis(searched, rows)
step_view(searched, checkpoint.tokenizer, tokens, clicked)
outputs_section(searched, checkpoint.config.max_len)
verdict(searched)
nbest_section(rows)
hypothesis_picker(rows, checkpoint.tokenizer, clicked)
if not tokens:
    st.info(t("The start node has produced nothing yet: pick another node."))
    st.stop()
attention_section(selection, checkpoint, searched, tokens)
