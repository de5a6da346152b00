"""Which learned position table the Positional encoding page compares with the sinusoids: the loaded model's
(where it learned its positions), or Table 3 row (E)'s learned model, stored with the app or trained here
from the tour (stop 9)."""

from __future__ import annotations

import numpy as np

from explorer.analysis.positional import learned_table
from explorer.checkpoint import Checkpoint
from ui.i18n import t
from ui.layout import controls
from ui.tour.table3_live import finished_pair, stored_row
from ui.urlstate import bound_choice

SOURCE_KEY = "pe_learned"
# Option → its label (message ids).
SOURCE_LABELS = {
    "none": "none (sinusoids only)",
    "model": "the loaded model's",
    "stored": "Table 3 row (E), stored",
    "live": "Table 3 row (E), trained here",
}


def _row_e_table(stored: bool) -> np.ndarray | None:
    """Row (E)'s learned model's (max_len, d_model) source position table: the stored one or this server's."""
    result = stored_row("E") if stored else finished_pair("E")
    return None if result is None else result.variants[1].positions


def learned_choice(checkpoint: Checkpoint, length: int) -> np.ndarray | None:
    """The learned table (positions, d) beside the sinusoids, at most `length` positions, or None (?pe_learned=).

    The default is the loaded model's own table where it has one, else none: the page then shows the sinusoids
    alone. A choice of "none" made for another model gives way to the loaded model's own table."""
    tables = {
        "model": learned_table(checkpoint.model, min(length, checkpoint.config.max_len)),
        "stored": _row_e_table(stored=True),
        "live": _row_e_table(stored=False),
    }
    # A model with learned positions always shows a learned table (its own by default); "none" is for the others.
    found = [key for key, table in tables.items() if table is not None]
    options = found if "model" in found else ["none", *found]
    choice = bound_choice(
        controls().selectbox,
        t("Learned positions to compare"),
        options,
        SOURCE_KEY,
        "model" if "model" in options else "none",
        format_func=lambda key: t(SOURCE_LABELS[key]),
        help=t(
            "Table 3 row (E): a tiny model of the tour trained with learned positions on the copy task "
            "(d_model = 64, sequences of up to 10 symbols)."
        ),
    )
    table = tables.get(choice or "none")
    return None if table is None else table[:length]
