"""Where Translate's sentence comes from: typed (with the checkpoint's examples one click away), or picked
from an uploaded file that is translated as a batch (ui/translate/batch.py)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from ui.attention_controls import sentence_input
from ui.attention_view import checkpoint_examples, with_examples
from ui.i18n import current_language, t
from ui.markdown import ERROR_CHARS, shown_value
from ui.urlstate import bound_choice

INPUTS = {"type": "Type a sentence", "file": "Upload a text file"}


def input_choice(side: Any) -> str:
    """'type' or 'file', kept in the URL (?input=file)."""
    return str(
        bound_choice(
            side.segmented_control,
            t("Input"),
            INPUTS,
            "input",
            "type",
            required=True,
        )
    )


def typed_sentence(side: Any, checkpoint: Checkpoint) -> str | None:
    """The sentence box in `side`, offering the checkpoint folder's own examples; None (with a hint) while it
    is empty."""
    examples = checkpoint_examples(checkpoint.path, checkpoint.metadata, current_language())
    if examples.problem:
        st.warning(shown_value(examples.problem, ERROR_CHARS), icon=":material/warning:")
    with side:
        sentence = sentence_input("sentence", with_examples(checkpoint.metadata, examples))
    if not sentence:
        st.info(
            t("Type a sentence above, or click an example, to see its translation and its attention."),
            icon=":material/keyboard:",
        )
        return None
    return sentence
