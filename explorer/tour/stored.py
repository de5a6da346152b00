"""The tour's stored results (explorer/tour/data/*.json): small JSON files, made by a command and shipped with
the app, so that a stop shows a result trained on a CPU at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read(path: Path) -> dict[str, Any] | None:
    """The file's data, or None when it is absent."""
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
