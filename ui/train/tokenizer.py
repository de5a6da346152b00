"""2 · Tokenizer: a SentencePiece vocabulary trained on the chosen corpus, and what it makes of a sentence."""

from __future__ import annotations

import streamlit as st

from explorer.data import ParallelCorpus
from explorer.tokenizer import Tokenizer
from explorer.training.datasets import train_tokenizer
from ui.i18n import t
from ui.train.data import DataChoice

VOCABS = (32, 64, 128, 256, 500, 1000, 2000, 4000, 8000, 16000, 37000)


@st.cache_resource(show_spinner=False, max_entries=8)
def tokenizer_for(key: str, vocab: int, synthetic: bool, _train: ParallelCorpus) -> Tokenizer:
    """SentencePiece on both sides of the corpus identified by `key` (the corpus itself is not hashed)."""
    return train_tokenizer(_train, vocab, synthetic=synthetic)


def tokenizer_section(choice: DataChoice) -> Tokenizer | None:
    st.subheader(t("2 · Tokenizer"))
    vocab = st.select_slider(
        t("Vocabulary size (upper bound)"),
        VOCABS,
        key="train_vocab",
        help=t(
            "A joint SentencePiece vocabulary over source and target, as in Section 5.1 "
            "(the paper: 37,000 byte-pair pieces). A small corpus gets fewer pieces."
        ),
    )
    try:
        with st.spinner(t("Training the tokenizer…")):
            tokenizer = tokenizer_for(choice.key, vocab, choice.synthetic, choice.train)
    except ValueError as error:
        st.error(t("No tokenizer: {error}", error=error), icon=":material/error:")
        return None
    example = choice.train.source[0]
    pieces = tokenizer.pieces(tokenizer.encode(example))
    kind = t("whole symbols (a word vocabulary)") if choice.synthetic else t("subword pieces (unigram model)")
    st.markdown(
        t(
            "**{count} pieces**, {kind}, trained on this corpus in the app. The first training sentence "
            "becomes {n} pieces:",
            count=f"{tokenizer.vocab_size:,}",
            kind=kind,
            n=len(pieces),
        )
    )
    st.code(" ".join(pieces), language=None, wrap_lines=True)
    return tokenizer
