"""Positional encoding (Section 3.5): the sinusoids, their wavelengths, what they make similar, the shift as a
rotation, how strongly position enters the loaded model next to the token embeddings, and word order; one tab
each after the controls they share."""

from __future__ import annotations

from explorer.analysis.positional import sinusoid_table
from ui.attention_controls import number_picker
from ui.i18n import current_language
from ui.model_cache import require_model
from ui.part_tabs import part_tabs
from ui.positional.learned_source import learned_choice
from ui.positional.model_input import norms_section
from ui.positional.sinusoids import (
    intro,
    length_control,
    shift_section,
    similarity_section,
    table_section,
    waves_section,
)
from ui.positional.word_order import word_order_section

selection, checkpoint = require_model()
intro(selection.name, checkpoint.config)
length = length_control(checkpoint.config)
learned = learned_choice(checkpoint, length)  # (positions, d) or None: sinusoids alone
table = sinusoid_table(length, checkpoint.config.d_model)  # (length, d_model), shared by three sections

parts = part_tabs("pe_part")
if parts["encoding"].open:
    with parts["encoding"]:
        table_section(table, learned)
        waves_section(table)
if parts["similarity"].open:
    with parts["similarity"]:
        similarity_section(table, learned)
        shift_section(checkpoint.config.d_model, length)
if parts["input"].open:
    with parts["input"]:
        norms_section(checkpoint)
if parts["word_order"].open:
    with parts["word_order"]:
        word_order_section(selection, current_language(), "pe", number_picker)
