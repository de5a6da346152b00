"""Translating a whole uploaded text file: reading it safely, splitting its lines into sentences, translating
in cached chunks with a progress bar (with the float model or its int8 copy), one warning naming the lines
that were cut, the results table with its CSV and TSV downloads, and the pick of one sentence to look at."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.data.corpus import CorpusError, read_sentences
from explorer.inference import Translation
from explorer.text.sentences import split_lines
from explorer.text.spreadsheet import safe_rows
from ui.attention_view import BATCH_CHUNK, MAX_UPLOAD_BYTES, MAX_UPLOAD_LINES, result_rows, rows_to_delimited
from ui.figures import file_stem
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
    selection: Selection, lines: Sequence[str], *, int8: bool = False, **options: Any
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


def upload_section(selection: Selection, checkpoint: Checkpoint, options: dict[str, Any]) -> str | None:
    """The file uploader; once a file is in, its translations (search `options`) as a table with downloads,
    and a picker of the line to look at, which is returned (None, with a hint, while there is no file)."""
    # The box's own limit is the caption's (1 MB), so its "… per file" line and the caption say the same.
    upload = st.file_uploader(
        t("A text file, one sentence per line (UTF-8)"),
        key="upload",
        max_upload_size=max(1, MAX_UPLOAD_BYTES // (1024 * 1024)),
    )
    st.caption(
        t(
            "At most {lines} sentences and {kb} KB. Blank lines are skipped; sentences longer than the model "
            "reads ({max_len} tokens) are cut.",
            lines=MAX_UPLOAD_LINES,
            kb=MAX_UPLOAD_BYTES // 1024,
            max_len=checkpoint.config.max_len,
        )
    )
    int8 = int8_toggle(selection)
    if upload is None:
        st.info(t("Upload a .txt file to translate it as a batch."), icon=":material/upload_file:")
        return None
    lines, problem = read_upload(upload.getvalue(), upload.name)
    if lines is None:
        st.error(t("Not translated: {problem}", problem=problem), icon=":material/error:")
        return None
    batch = translate_batch(selection, lines, with_attention=False, int8=int8, **options)
    warn_truncated(batch, checkpoint.config.max_len)
    rows = batch_rows(lines, batch, int8=int8)
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        height=min(420, 38 * len(rows) + 40),
        column_config={"#": st.column_config.NumberColumn(width="small")},
    )
    _downloads(rows, file_stem(upload.name.rsplit(".", 1)[0] + "-translated"))
    if st.session_state.get("row", 0) >= len(lines):
        st.session_state["row"] = 0
    pick = st.selectbox(
        t("Sentence to look at"),
        range(len(lines)),
        key="row",
        format_func=lambda i: f"{i + 1}. {lines[i][:100]}",
    )
    return lines[pick or 0]


def download_text(rows: Sequence[dict[str, Any]], delimiter: str) -> str:
    """The table as CSV or TSV text; a sentence a spreadsheet would run as a formula is written as text."""
    return rows_to_delimited(safe_rows(rows), delimiter)


def _downloads(rows: Sequence[dict[str, Any]], stem: str) -> None:
    """The table as CSV and as TSV, two buttons on one row."""
    row = st.container(horizontal=True, gap="small")
    for label, delimiter, suffix, mime in (
        (t("Download CSV"), ",", "csv", "text/csv"),
        (t("Download TSV"), "\t", "tsv", "text/tab-separated-values"),
    ):
        row.download_button(
            label,
            download_text(rows, delimiter),
            file_name=f"{stem}.{suffix}",
            mime=mime,
            icon=":material/download:",
            on_click="ignore",
            width="content",
        )
