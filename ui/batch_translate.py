"""Translating a whole uploaded text file: reading it safely, splitting its lines into sentences, translating
in cached chunks with a progress bar, and one warning naming the lines that were cut."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from explorer.data.corpus import CorpusError, read_sentences
from explorer.inference import Translation
from explorer.text.sentences import split_lines
from ui.attention_view import BATCH_CHUNK, MAX_UPLOAD_BYTES, MAX_UPLOAD_LINES
from ui.i18n import t
from ui.model_cache import translate_for
from ui.model_picker import Selection


def read_upload(data: bytes, name: str) -> tuple[list[str] | None, str | None]:
    """(sentences, None) from an uploaded text file, or (None, message) saying why it cannot be used."""
    try:
        return read_sentences(data, name, MAX_UPLOAD_BYTES, MAX_UPLOAD_LINES), None
    except CorpusError as error:
        return None, str(error)


def translate_batch(selection: Selection, lines: Sequence[str], **options) -> list[list[Translation]]:
    """Translate many lines in cached chunks, with a progress bar that fills as chunks finish; each line is
    split into sentences (explorer/text/sentences.py) and comes back as its sentences' translations."""
    split = split_lines(lines)
    sentences = split.sentences
    bar = st.progress(0.0, text=t("Translating {n} sentences…", n=len(sentences)))
    results: list[Translation] = []
    for start in range(0, len(sentences), BATCH_CHUNK):
        results += translate_for(selection, list(sentences[start : start + BATCH_CHUNK]), **options)
        bar.progress(
            len(results) / len(sentences), text=t("Translated {done} of {n}", done=len(results), n=len(sentences))
        )
    bar.empty()
    return split.regroup(results)


def warn_truncated(translations: Sequence[Sequence[Translation]], max_len: int) -> None:
    """One warning naming the lines (any of whose sentences) were cut to the model's maximum length."""
    cut = [i + 1 for i, parts in enumerate(translations) if any(tr.truncated for tr in parts)]
    if cut:
        shown = ", ".join(map(str, cut[:10])) + (" …" if len(cut) > 10 else "")
        st.warning(
            t(
                "{cut} of {n} sentences were longer than the model reads ({max_len} tokens including </s>) and "
                "were cut before translating: sentence {shown} (numbered as in the table).",
                cut=len(cut),
                n=len(translations),
                max_len=max_len,
                shown=shown,
            ),
            icon=":material/content_cut:",
        )
