"""Streamlit pieces shared by the translate and compare pages: sentence box with examples, the translation
card, the (family, layer, head) pickers, and batch translation of an uploaded file.

Every widget takes its key from the caller and is seeded from the URL (ui/urlstate.py), so a lecture slide
can link straight to a view.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import streamlit as st

from explorer.data.corpus import CorpusError, read_sentences
from explorer.data.synthetic import TASKS, task_description
from explorer.inference import Translation
from explorer.model.transformer import FAMILIES
from ui.attention_view import (BATCH_CHUNK, FAMILY_HELP, FAMILY_SHORT, FAMILY_TITLES, MAX_UPLOAD_BYTES,
                               MAX_UPLOAD_LINES, data_kind, example_sentences)
from ui.state import Selection, translate_for
from ui.urlstate import url_default

MAX_SENTENCE_CHARS = 1000
# Widget values survive while a widget is not drawn (another input mode, another page). Without this, a
# widget that comes back is drawn with nothing selected although its value is set (Streamlit 1.67).
PERSIST = "session"

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text: str) -> str:
    """Text shown literally inside st.markdown (no emphasis, links, maths or headings)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def sentence_input(key: str, metadata: dict, *, label: str = "Sentence", example: int = 0,
                   default: str | None = None) -> str:
    """A sentence box seeded from ?{key}= (else `default`, else example number `example`), with the
    checkpoint's example sentences one click away. Returns the sentence stripped ('' when empty)."""
    examples = example_sentences(metadata)
    url_default(key, default or examples[example % len(examples)])
    examples_key = f"{key}_example"

    def use_example() -> None:
        choice = st.session_state.get(examples_key)
        if choice:
            st.session_state[key] = choice
        st.session_state[examples_key] = None

    st.pills("Examples", examples, key=examples_key, on_change=use_example,
             help="Click one to put it in the box.")
    kind = data_kind(metadata)
    hint = f"Symbols separated by spaces. {task_description(kind)}" if kind in TASKS else None
    text = st.text_input(label, key=key, max_chars=MAX_SENTENCE_CHARS, help=hint,
                         placeholder="Type a sentence and press Enter", persist_state=PERSIST)
    return text.strip()


def show_translation(translation: Translation, max_len: int, *, how: str) -> None:
    """The translation in large type, with how it was found and a warning if the source was cut."""
    with st.container(border=True):
        st.caption(f"Translation \u00b7 {how}")
        output = translation.output or "(empty)"
        st.markdown(f"## {md_escape(output)}")
        details = (f"{len(translation.source_pieces)} source tokens \u2192 {len(translation.output_ids)} target "
                   f"tokens \u00b7 score {translation.score:.3f} (length-normalised log-probability)")
        if not translation.finished:
            details += " \u00b7 stopped at the length limit without producing </s>"
        st.caption(details)
    if translation.truncated:
        st.warning(f"The sentence is longer than this model reads ({max_len} tokens including </s>), so only "
                   f"its first {max_len - 1} tokens were translated.", icon=":material/content_cut:")


def family_picker(key: str, *, label: str = "Attention family", short: bool = False,
                  help: str | None = FAMILY_HELP) -> str:
    url_default(key, "cross", allowed=FAMILIES)
    names = FAMILY_SHORT if short else FAMILY_TITLES
    return st.segmented_control(label, FAMILIES, key=key, required=True, format_func=names.get, help=help,
                                persist_state=PERSIST)


def number_picker(label: str, key: str, count: int, *, default: int = 1, help: str | None = None) -> int:
    """1-based choice among `count` (layers or heads), seeded from the URL; a one-click button row."""
    options = list(range(1, count + 1))
    url_default(key, min(max(default, 1), count), int, allowed=options)
    if count > 12:
        return st.select_slider(label, options, key=key, help=help, persist_state=PERSIST)
    return st.segmented_control(label, options, key=key, required=True, help=help, persist_state=PERSIST)


def read_upload(data: bytes, name: str) -> tuple[list[str] | None, str | None]:
    """(sentences, None) from an uploaded text file, or (None, message) saying why it cannot be used."""
    try:
        return read_sentences(data, name, MAX_UPLOAD_BYTES, MAX_UPLOAD_LINES), None
    except CorpusError as error:
        return None, str(error)


def translate_batch(selection: Selection, sentences: Sequence[str], **options) -> list[Translation]:
    """Translate many sentences in cached chunks, with a progress bar that fills as chunks finish."""
    bar = st.progress(0.0, text=f"Translating {len(sentences)} sentences\u2026")
    results: list[Translation] = []
    for start in range(0, len(sentences), BATCH_CHUNK):
        results += translate_for(selection, list(sentences[start:start + BATCH_CHUNK]), **options)
        bar.progress(len(results) / len(sentences), text=f"Translated {len(results)} of {len(sentences)}")
    bar.empty()
    return results


def warn_truncated(translations: Sequence[Translation], max_len: int) -> None:
    """One warning naming the lines that were cut to the model's maximum length (nothing if none were)."""
    cut = [i + 1 for i, t in enumerate(translations) if t.truncated]
    if cut:
        shown = ", ".join(map(str, cut[:10])) + (" \u2026" if len(cut) > 10 else "")
        st.warning(f"{len(cut)} of {len(translations)} sentences were longer than the model reads ({max_len} "
                   f"tokens including </s>) and were cut before translating: sentence {shown} (numbered as in "
                   "the table).", icon=":material/content_cut:")
