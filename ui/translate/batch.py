"""Translating a whole uploaded text file: reading it safely, splitting its lines into sentences, translating
in cached chunks with a progress bar (with the float model or its int8 copy, issue 13.3), and one warning
naming the lines that were cut."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from explorer.data.corpus import CorpusError, read_sentences
from explorer.inference import Translation
from explorer.text.sentences import split_lines
from ui.attention_view import BATCH_CHUNK, MAX_UPLOAD_BYTES, MAX_UPLOAD_LINES, result_rows
from ui.i18n import t
from ui.model_cache import int8_unavailable, load_int8_model, translate_for
from ui.model_picker import Selection


def read_upload(data: bytes, name: str) -> tuple[list[str] | None, str | None]:
    """(sentences, None) from an uploaded text file, or (None, message) saying why it cannot be used."""
    try:
        return read_sentences(data, name, MAX_UPLOAD_BYTES, MAX_UPLOAD_LINES), None
    except CorpusError as error:
        return None, str(error)


def int8_toggle(selection: Selection) -> bool:
    """The int8 switch of the batch upload, off by default; disabled, with a note, when the model is on a GPU.
    True only when int8 is switched on and can run."""
    on_gpu = int8_unavailable(selection.device)
    on = st.toggle(
        t("Translate the file with int8"),
        key="int8",
        disabled=on_gpu,
        help=t(
            "The Feed-Forward Network (FFN) layers run in int8, within 0.3 BLEU of float. Not always faster: on "
            "the 2-core CPU we measured, the float model translated faster. CPU only. The attention views always "
            "use the float model."
        ),
    )
    if on_gpu:
        st.caption(
            t(
                "int8 runs on the CPU only and the model is on {device}. Choose cpu as the device in the sidebar "
                "to use it.",
                device=selection.device,
            )
        )
    return bool(on) and not on_gpu


def translate_batch(
    selection: Selection, lines: Sequence[str], *, int8: bool = False, **options
) -> list[list[Translation]]:
    """Translate many lines in cached chunks, with a progress bar that fills as chunks finish; each line is
    split into sentences (explorer/text/sentences.py) and comes back as its sentences' translations. `int8`:
    with the shared int8 copy of the model (ui/model_cache.py), and a caption saying so."""
    split = split_lines(lines)
    sentences = split.sentences
    if int8:
        with st.spinner(t("Making the int8 copy of the model…")):  # once per checkpoint, for every session
            load_int8_model(selection.path, selection.version)
    bar = st.progress(0.0, text=t("Translating {n} sentences…", n=len(sentences)))
    results: list[Translation] = []
    for start in range(0, len(sentences), BATCH_CHUNK):
        results += translate_for(selection, list(sentences[start : start + BATCH_CHUNK]), int8=int8, **options)
        bar.progress(
            len(results) / len(sentences), text=t("Translated {done} of {n}", done=len(results), n=len(sentences))
        )
    bar.empty()
    if int8:
        st.caption(
            t(
                "Translated with the int8 model (feed-forward layers quantized). The sentence you look at below is "
                "translated again by the float model, whose attention is shown."
            )
        )
    return split.regroup(results)


def batch_rows(
    lines: Sequence[str], translations: Sequence[Sequence[Translation]], *, int8: bool
) -> list[dict[str, Any]]:
    """The results table and its CSV/TSV download (ui/attention_view.py), with a `model` column saying which
    model translated: "int8" or "float"."""
    model = "int8" if int8 else "float"
    return [{**row, "model": model} for row in result_rows(lines, translations)]


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
