"""The explain page's exercise: a cross-attention head that looks at "." (or `</s>`) while producing a word;
which source token is it really taking information from? The answer is in the value-weighted attention (what the
head moves, explorer/explain/value_weighted.py) and, for the output as a whole, in attribution."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.explain.sinks import END_PIECES, is_sink_piece
from explorer.explain.value_weighted import ValueWeighted


@dataclass(frozen=True)
class DotHead:
    """One cross-attention head (0-based layer, head) at one output row, and the source key it weighs most.

    raw, weighted: (src,) the head's raw weights and value-weighted shares at that row.
    """

    layer: int
    head: int
    position: int
    key: int
    raw: np.ndarray
    weighted: np.ndarray

    @property
    def moved_from(self) -> int:
        """The source position the head moves most from: the answer to the exercise."""
        return int(np.argmax(self.weighted))


def dot_head(explained: ValueWeighted, source_pieces: Sequence[str]) -> DotHead | None:
    """The (layer, head, output row) whose raw cross-attention puts the most weight on one punctuation piece of the
    source ("." first; `</s>` only when the source has no punctuation), leaving out the last row (the one that
    produces `</s>`) when there are others. None when the source has neither."""
    pieces = list(source_pieces)
    punctuation = [j for j, p in enumerate(pieces) if is_sink_piece(p) and p not in END_PIECES]
    keys = punctuation or [j for j, p in enumerate(pieces) if p in END_PIECES]
    if not keys:
        return None
    raw = explained.raw.cross  # (layers, heads, tgt, src)
    rows = raw.shape[2] - 1 if raw.shape[2] > 1 else raw.shape[2]
    on_keys = raw[:, :, :rows][..., keys]  # (layers, heads, rows, keys)
    layer, head, position, which = np.unravel_index(int(np.argmax(on_keys)), on_keys.shape)
    weighted = explained.weighted("cross")
    return DotHead(
        int(layer),
        int(head),
        int(position),
        keys[int(which)],
        raw[layer, head, position].astype(np.float64),
        weighted[layer, head, position].astype(np.float64),
    )
