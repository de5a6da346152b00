"""Markers a folder's conftest.py gives every test in that folder (pytest calls a conftest's
`pytest_collection_modifyitems` with the whole session's items, so each folder picks out its own)."""

from __future__ import annotations

from pathlib import Path

import pytest


def mark_folder(items: list[pytest.Item], conftest: str, *marks: pytest.MarkDecorator) -> None:
    """Add `marks` to every item collected from the folder that holds `conftest` (pass `__file__`)."""
    folder = Path(conftest).resolve().parent
    for item in items:
        if item.path.is_relative_to(folder):
            for mark in marks:
                item.add_marker(mark)
