"""Compare heads: two to four attention heads side by side on one colour scale — different heads on one
sentence, one head in two checkpoints, or one head on two sentences."""

from __future__ import annotations

from ui.compare.modes import checkpoints_section, heads_section, sentences_section
from ui.compare.panels import compare_controls
from ui.i18n import t
from ui.layout import controls, page_header
from ui.model_cache import require_model

selection, checkpoint = require_model()

page_header(
    t("Compare heads"),
    t(
        "Put attention heads next to each other on the **same colour scale**: do two heads of one layer split "
        "the work (Section 3.2.2: *multi-head attention allows the model to jointly attend to information from "
        "different representation subspaces*)? Does a head look the same in a toy model and in a translator, "
        "or early and late in training? Does it do the same on another sentence?"
    ),
)

side = controls()
choice = compare_controls(side)
if choice.what == "heads":
    heads_section(side, selection, checkpoint, choice)
elif choice.what == "checkpoints":
    checkpoints_section(selection, checkpoint, choice)
else:
    sentences_section(selection, checkpoint, choice)
