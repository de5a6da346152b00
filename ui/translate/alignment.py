"""Translate's word-alignment view: a head's argmax links over the reference alignment of a Multi30k test2016
pair (the typed sentence's own pair when it is one of them), raw or value-weighted as the page's switch says."""

from __future__ import annotations

import streamlit as st

from explorer.checkpoint import Checkpoint
from ui.explain.overlay import overlay_available, overlay_section
from ui.i18n import t
from ui.model_picker import Selection
from ui.translate.attention import ViewChoice


def alignment_expander(selection: Selection, checkpoint: Checkpoint, sentence: str, choice: ViewChoice) -> None:
    """Nothing for a model that does not translate English into German, or without the test set."""
    if not overlay_available(checkpoint):
        return
    # Drawn only while open (kept in the URL as ?ta_align=true): closed, a rerun of the page costs nothing here.
    expander = st.expander(
        t("Word alignment: a head's links over a reference alignment"), key="ta_align", on_change="rerun",
        bind="query-params",
    )  # fmt: skip
    if expander.open:
        with expander:
            overlay_section(selection, checkpoint, prefix="ta", weighting=choice.weighting, sentence=sentence)
