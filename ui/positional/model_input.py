"""The Positional encoding page's section on the loaded model: how large the token term and the position term
are at the encoder's input for one sentence (Sections 3.4 and 3.5)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.analysis.positional import embedding_norms
from explorer.checkpoint import Checkpoint
from explorer.claims import token_and_position_cosine
from explorer.figures.positional import embedding_norms_figure
from explorer.figures.theme import wrap_words
from explorer.inference import encode_sources
from explorer.text.pieces import shown_pieces
from ui.attention_controls import sentence_input
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import section_header


@st.fragment
def norms_section(checkpoint: Checkpoint) -> None:
    """‖E·√d_model‖ beside ‖PE‖ for every token of a sentence (?pe_sentence=), as a figure and a table."""
    config = checkpoint.config
    d_model = config.d_model
    section_header(
        t("How position enters the model"),
        t(
            "The encoder's input at position pos is **E[token] · √d_model + PE(pos)** (Sections 3.4 and 3.5): "
            "the embedding is scaled by √{d_model} = {scale:.1f} before the position is added. "
            "The bars compare the sizes of the two terms for a sentence, with this model's own embedding table.",
            d_model=d_model,
            scale=np.sqrt(d_model),
        ),
    )
    sentence = sentence_input("pe_sentence", checkpoint.metadata)
    if not sentence:
        st.info(t("Type a sentence to see its embedding and position norms."))
        return
    ids, truncated = encode_sources(checkpoint.tokenizer, [sentence], config.max_len, config.eos_id)
    if truncated[0]:
        st.warning(
            t(
                "The sentence is longer than this model reads; only its first {kept} tokens (plus </s>) are shown.",
                kept=config.max_len - 1,
            ),
            icon=":material/content_cut:",
        )
    lang = current_language()
    # Labels as a reader sees them (no "▁"), for the figure and the table alike.
    norms = embedding_norms(checkpoint.model, ids[0], shown_pieces(checkpoint.tokenizer.pieces(ids[0])))
    show_figure(
        embedding_norms_figure(
            norms.token,
            norms.position,
            norms.total,
            norms.labels,
            title=wrap_words(t("Token term vs position term at the encoder input")),
            lang=lang,
        ),
        "Embedding and position norms",
        key="pe_norms",
    )
    st.caption(
        t(
            "‖PE‖ = √(d_model / 2) = {norm:.2f} for every position (half the dimensions are sines, half cosines, "
            "sin² + cos² = 1).",
            norm=np.sqrt(d_model / 2),
        )
        if config.positional != "learned"
        else t("Learned position vectors have their own norms.")
    )
    ratio = t("On average the token term is **{ratio:.1f}×** the position term.", ratio=norms.token_to_position)
    st.markdown(f"{ratio} {token_and_position_cosine(norms.mean_cosine, lang)}")
    st.dataframe(
        norms.rows(),
        hide_index=True,
        width="stretch",
        column_config={
            "position": st.column_config.NumberColumn(t("position")),
            "token": st.column_config.TextColumn(t("token")),
            "‖sum‖": st.column_config.NumberColumn(f"‖{t('sum')}‖", format="%.3f"),
            **{name: st.column_config.NumberColumn(format="%.3f") for name in ("‖E·√d‖", "‖PE‖", "cos(E, PE)")},
        },
    )
