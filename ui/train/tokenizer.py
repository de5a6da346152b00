"""2 · Tokenizer: a SentencePiece vocabulary trained on the chosen corpus, and what it makes of a sentence."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from explorer.data import ParallelCorpus, prepare
from explorer.tokenizer import Tokenizer
from explorer.training.datasets import train_tokenizer
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.train.continued import continue_toggle
from ui.train.data import DataChoice
from ui.train.prepared import wait_for

VOCABS = (32, 64, 128, 256, 500, 1000, 2000, 4000, 8000, 16000, 37000)


# A vocabulary is small (tens to hundreds of KB); a few are kept for everyone, each for an hour at most.
@st.cache_resource(show_spinner=False, max_entries=8, ttl=3600)
def tokenizer_for(key: str, vocab: int, synthetic: bool, _train: ParallelCorpus, _job: str | None) -> Tokenizer:
    """SentencePiece on both sides of the corpus identified by `key` (the corpus itself is not hashed): trained
    here, or for a large upload read from what its preparation (`_job`) trained outside the server."""
    if _job is not None:
        return Tokenizer.load(prepare.tokenizer_path(Path(_job), vocab))
    return train_tokenizer(_train, vocab, synthetic=synthetic)


def prepared_tokenizer(choice: DataChoice, vocab: int) -> None:
    """For a large upload: train its vocabulary in a process of its own and wait for it (ValueError if it failed)."""
    if choice.job is None:
        return
    prepare.start_tokenizer(choice.job, vocab)
    state = wait_for(choice.job, prepare.tokenizer_step(vocab), t("Training the tokenizer…"))
    if state.status != "done":
        raise ValueError(state.error)


def tokenizer_section(choice: DataChoice) -> Tokenizer | None:
    st.subheader(t("2 · Tokenizer"))
    going_on = continue_toggle()
    if going_on is not None:
        st.caption(
            t(
                "The loaded model's own tokenizer: {count} pieces.",
                count=f"{going_on.checkpoint.tokenizer.vocab_size:,}",
            )
        )
        return going_on.checkpoint.tokenizer
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
        prepared_tokenizer(choice, vocab)
        with st.spinner(t("Training the tokenizer…")):
            job = None if choice.job is None else str(choice.job)
            tokenizer = tokenizer_for(choice.key, vocab, choice.synthetic, choice.train, job)
    except ValueError as error:
        st.error(t("No tokenizer: {error}", error=shown_value(error, ERROR_CHARS)), icon=":material/error:")
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
