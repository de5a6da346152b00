"""Every test here is `slow`: it starts training processes (and stops, kills or restarts them), or checks the
worker's process-level behaviour, so `pytest -m "not slow"` starts none."""

from __future__ import annotations

import pytest

from tests.folder_marks import mark_folder


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_folder(items, __file__, pytest.mark.slow)
