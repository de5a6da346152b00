"""The Complexity page's three parts as tabs kept in the URL (?complexity_part=path): Table 1 (the operations
against n and the table at the chosen sizes), the layers measured on this machine, and the maximum path length.
Only the open tab is drawn (ui/part_tabs.py): the path-length figure (six panels, over a thousand markers) held
the first figure back by ~0.7 s in the browser when the page drew everything at once."""

from __future__ import annotations

from typing import Any

from ui import part_tabs as tabs

PARTS = {
    "table": "Table 1",
    "measured": "Measured on this machine",
    "path": "Maximum path length",
}
PART_KEY = "complexity_part"


def part_tabs() -> dict[str, Any]:
    """The page's tab containers by part (ui/part_tabs.py)."""
    return tabs.part_tabs(PARTS, PART_KEY)
