"""The height a Step by step table needs to show every row without an inner vertical scrollbar."""

from __future__ import annotations

ROW_PX = 36  # Streamlit's data-frame row (35 px) and its border
# Room for a horizontal scrollbar: at 1024 px a wide table scrolls sideways, and the bar then covered the last row.
SCROLLBAR_PX = 18


def full_height(rows: int) -> int:
    """Pixels for a header and `rows` rows, with room under them for a sideways scrollbar."""
    return ROW_PX * (rows + 1) + 4 + SCROLLBAR_PX
