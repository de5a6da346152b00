"""The controls the attention pages share: the sentence box with examples, the (family, layer, head) pickers,
the translation card (one sentence, or a line of several joined) and the picker of one sentence among them.
Every control is keyed by the caller and kept in the URL, so a lecture slide can link straight to a view:
plain values through Streamlit's `bind="query-params"`, labelled options through ui/urlstate.py (which also
says so when a link's value does not fit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from explorer.data.synthetic import TASKS, task_description
from explorer.decoding.repetition import output_loop
from explorer.inference import Translation
from explorer.paper import FAMILIES, FAMILY_SHORT, FAMILY_TITLES
from explorer.text.sentences import join_sentences
from ui.attention_view import FAMILY_HELP, data_kind, example_sentences
from ui.i18n import t
from ui.markdown import md_escape
from ui.urlstate import note_link_value, note_long_text, sync_to_url, url_default

MAX_SENTENCE_CHARS = 1000


def sentence_input(
    key: str, metadata: dict, *, label: str = "Sentence", example: int = 0, default: str | None = None
) -> str:
    """A sentence box bound to ?{key}= (else `default`, else example number `example`), with the checkpoint's
    example sentences one click away. Returns the sentence stripped ('' when empty)."""
    examples = example_sentences(metadata)
    examples_key = f"{key}_example"

    def use_example() -> None:
        choice = st.session_state.get(examples_key)
        if choice:
            st.session_state[key] = choice
        st.session_state[examples_key] = None

    st.pills(
        t("Examples"), examples, key=examples_key, on_change=use_example, help=t("Click one to put it in the box.")
    )
    kind = data_kind(metadata)
    hint = t("Symbols separated by spaces. {task}", task=task_description(kind)) if kind in TASKS else None
    note_long_text(key, MAX_SENTENCE_CHARS)
    initial = None if key in st.session_state else (default or examples[example % len(examples)])
    text = st.text_input(
        t(label),
        value=initial,
        key=key,
        max_chars=MAX_SENTENCE_CHARS,
        help=hint,
        placeholder=t("Type a sentence and press Enter"),
        bind="query-params",
    )
    return (text or "").strip()


def show_translation(translation: Translation, max_len: int, *, how: str) -> None:
    """The translation in large type, with how it was found and a warning if the source was cut."""
    # Compact (one heading line, one caption line): on a 720 px projector the figure below must still fit.
    with st.container(border=True, gap="small"):
        st.markdown(f"## {md_escape(translation.output) if translation.output else t('(empty)')}")
        details = (
            t("Translation · {how}", how=how)
            + " · "
            + t(
                "{source} source tokens → {target} target tokens · score {score:.3f} (length-normalised "
                "log-probability)",
                source=len(translation.source_pieces),
                target=len(translation.output_ids),
                score=translation.score,
            )
        )
        if not translation.finished:
            details += " · " + t("stopped at the length limit without producing </s>")
        st.caption(details)
    if translation.truncated:
        _warn_cut(max_len)
    warn_repeated([translation])


def show_translations(translations: Sequence[Translation], max_len: int, *, how: str) -> None:
    """A line's translation: the card of its one sentence, or its sentences' translations joined, with how
    many sentences it had and the warnings of any of them."""
    if len(translations) == 1:
        show_translation(translations[0], max_len, how=how)
        return
    output = join_sentences(tr.output for tr in translations)
    with st.container(border=True, gap="small"):
        st.markdown(f"## {md_escape(output) if output else t('(empty)')}")
        details = (
            t("Translation · {how}", how=how)
            + " · "
            + t(
                "{n} sentences, each translated on its own and joined; {source} source tokens → {target} target tokens",
                n=len(translations),
                source=sum(len(tr.source_pieces) for tr in translations),
                target=sum(len(tr.output_ids) for tr in translations),
            )
        )
        if not all(tr.finished for tr in translations):
            details += " · " + t("stopped at the length limit without producing </s>")
        st.caption(details)
    if any(tr.truncated for tr in translations):
        _warn_cut(max_len)
    warn_repeated(translations)


def _warn_cut(max_len: int) -> None:
    st.warning(
        t(
            "The sentence is longer than this model reads ({max_len} tokens including </s>), so only its "
            "first {kept} tokens were translated.",
            max_len=max_len,
            kept=max_len - 1,
        ),
        icon=":material/content_cut:",
    )


def warn_repeated(translations: Sequence[Translation]) -> None:
    """A warning when an output says a phrase (two or more words, or pieces inside a word) three or more times
    in a row: a decoding loop, typical of the model out of its domain (explorer/decoding/repetition.py)."""
    for tr in translations:
        found = output_loop(tr.output, tr.target_output_pieces)
        if found is not None:
            st.warning(
                t(
                    "The translation repeats “{phrase}” {times} times in a row: the search is stuck in a loop, "
                    "which happens out of the model's domain. The settings can forbid repeated phrases.",
                    phrase=found[0],
                    times=found[1],
                ),
                icon=":material/repeat:",
            )
            return


def sentence_picker(key: str, sentences: Sequence[str]) -> int:
    """Which sentence of a line the views below show: 'Sentence 2 of 3: …' (0-based index back)."""
    if st.session_state.get(key, 0) >= len(sentences):  # a new line with fewer sentences
        st.session_state[key] = 0
    return st.selectbox(
        t("Attention of"),
        range(len(sentences)),
        key=key,
        format_func=lambda i: t("Sentence {i} of {n}", i=i + 1, n=len(sentences)) + f": {sentences[i][:80]}",
        help=t("The line has several sentences; each was translated on its own, so each has its own attention."),
    )


def choice_list(label: str, options: Mapping[str, str], key: str, *, help: str | None = None, where: Any = st) -> str:
    """One choice among `options` (value -> message id), one option a line: for a sidebar or a narrow column,
    where joined buttons break over several rows once their labels are long (in Korean at 1024 px: Translate's
    view, Compare's comparison and colour scale, the attention families, tests/browser/test_pages_cut.py).

    label and help are shown as given (the caller translates them); the options' labels are translated now, in
    this run's language: Streamlit may call format_func again outside the run (AppTest does, to send the
    widget's state back), where a lazy `t` would format in the default language. where: st, or a container.
    """
    labels = {value: t(message) for value, message in options.items()}
    return where.radio(label, tuple(options), key=key, format_func=labels.__getitem__, help=help)


def family_picker(
    key: str,
    *,
    label: str = "Attention family",
    short: bool = False,
    help: str | None = FAMILY_HELP,
    vertical: bool = False,
) -> str:
    """Encoder self / decoder self / cross, kept in the URL as its key (?family=cross).

    vertical: a list of radio buttons, one family a line, for a column too narrow for three joined buttons
    (Translate's pickers at 1024 px: the segmented control broke into three rows with their borders open).
    """
    url_default(key, "cross", allowed=FAMILIES)
    names = FAMILY_SHORT if short else FAMILY_TITLES
    help_text = t(help) if help else None
    if vertical:
        family = choice_list(t(label), {f: names[f] for f in FAMILIES}, key, help=help_text)
    else:
        labels = {f: t(names[f]) for f in FAMILIES}  # translated now: `choice_list`'s note
        family = st.segmented_control(
            t(label), FAMILIES, key=key, required=True, format_func=labels.__getitem__, help=help_text
        )
    sync_to_url(key)
    return family


def number_picker(label: str, key: str, count: int, *, default: int = 1, help: str | None = None) -> int:
    """1-based choice among `count` (layers or heads), bound to ?{key}=; a one-click button row."""
    options = list(range(1, count + 1))
    default = min(max(default, 1), count)
    note_link_value(key, [str(o) for o in options], default)
    if key in st.session_state and st.session_state[key] not in options:  # another model with fewer layers
        st.session_state[key] = default
    initial = None if key in st.session_state else default
    if count > 12:
        return st.select_slider(t(label), options, value=initial, key=key, help=help, bind="query-params")
    return st.segmented_control(
        t(label), options, default=initial, key=key, required=True, help=help, bind="query-params"
    )
