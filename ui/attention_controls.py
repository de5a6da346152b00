"""The controls the attention pages share: the sentence box with examples, the (family, layer, head) pickers,
and the translation card. Every control is keyed by the caller and kept in the URL, so a lecture slide can
link straight to a view: plain values through Streamlit's `bind="query-params"`, labelled options through
ui/urlstate.py (which also says so when a link's value does not fit).
"""

from __future__ import annotations

import streamlit as st

from explorer.data.synthetic import TASKS, task_description
from explorer.inference import Translation
from explorer.model.transformer import FAMILIES
from ui.attention_view import FAMILY_HELP, FAMILY_SHORT, FAMILY_TITLES, data_kind, example_sentences
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
        st.warning(
            t(
                "The sentence is longer than this model reads ({max_len} tokens including </s>), so only its "
                "first {kept} tokens were translated.",
                max_len=max_len,
                kept=max_len - 1,
            ),
            icon=":material/content_cut:",
        )


def family_picker(
    key: str, *, label: str = "Attention family", short: bool = False, help: str | None = FAMILY_HELP
) -> str:
    """Encoder self / decoder self / cross, kept in the URL as its key (?family=cross)."""
    url_default(key, "cross", allowed=FAMILIES)
    names = FAMILY_SHORT if short else FAMILY_TITLES
    family = st.segmented_control(
        t(label), FAMILIES, key=key, required=True, format_func=lambda f: t(names[f]), help=t(help) if help else None
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
