"""The small tables and lists the tour's stops show beside their figures, as plain data: the first columns of a
tensor rounded for reading, the training step a checkpoint records, and the sequence lengths stop 6 times.
(Token labels without the sentencepiece word marker: explorer/text/pieces.py.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def leading_columns(values: np.ndarray, count: int, decimals: int, name: str = "") -> dict[str, np.ndarray]:
    """The first `count` columns of `values` (rows, dims), rounded: {"name[0]": (rows,), "name[1]": ...}."""
    return {f"{name}[{j}]": np.round(values[:, j], decimals) for j in range(min(count, values.shape[1]))}


def trained_steps(metadata: Mapping[str, Any]) -> int | None:
    """The step a checkpoint was saved at: its training record's, else the top-level one, else None."""
    step = (metadata.get("training") or {}).get("step") or metadata.get("step")
    return int(step) if step else None


def timed_lengths(d: int) -> tuple[int, ...]:
    """The sequence lengths n at which stop 6 times its layers for width d: a few short sentences, and n = d and
    2d, around where self-attention and recurrence cost the same (Table 1)."""
    return tuple(sorted({16, 32, 64, 128, d, 2 * d}))
