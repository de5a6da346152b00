"""Continue the loaded model: a run that trains the checkpoint chosen in the sidebar (an imported Marian model, say)
further on this page's corpus, with its own tokenizer, configuration and weights, instead of a new model. The
tokenizer section offers the choice; the model and start sections follow it (`continued`)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from explorer.checkpoint import Checkpoint
from ui.i18n import t
from ui.markdown import shown_value
from ui.model_cache import current_model

CONTINUE_KEY = "train_continue"


@dataclass(frozen=True)
class Continued:
    path: str  # the checkpoint's folder: the run starts from its weights (RunManager.start_new's init_from)
    checkpoint: Checkpoint


def continue_toggle() -> Continued | None:
    """The switch "continue the loaded model" (offered only while a model is loaded), and what it chose."""
    selection = st.session_state.get("selection")
    if selection is None:
        return None
    st.toggle(
        t("Continue training the loaded model {name}", name=shown_value(selection.name)),
        key=CONTINUE_KEY,
        help=t(
            "The run starts from this checkpoint's weights, with its own tokenizer and model settings, and trains "
            "them further on the corpus above (with a fresh optimizer)."
        ),
    )
    return continued()


def continued() -> Continued | None:
    """The loaded model when the switch is on; None for a new model (or one that cannot be loaded, said why)."""
    selection = st.session_state.get("selection")
    if selection is None or not st.session_state.get(CONTINUE_KEY):
        return None
    checkpoint = current_model(selection)
    return None if checkpoint is None else Continued(selection.path, checkpoint)
