"""The Positional encoding page's four parts as tabs kept in the URL (?pe_part=similarity): the sinusoids and
their waves, the similarity between positions and the shift as a rotation, how position enters the loaded
model's input, and word order. Only the open tab is drawn (ui/part_tabs.py): the page's nine figures at once
kept its first figure waiting for the browser to lay out the rest."""

from __future__ import annotations

from typing import Any

from ui import part_tabs as tabs

PARTS = {
    "encoding": "The sinusoids",
    "similarity": "Similarity and shift",
    "input": "Position in the model's input",
    "word_order": "Word order",
}
PART_KEY = "pe_part"


def part_tabs() -> dict[str, Any]:
    """The page's tab containers by part (ui/part_tabs.py)."""
    return tabs.part_tabs(PARTS, PART_KEY)
