"""Minimal pairs: two sentences that differ in one word, and which attention heads change most.

The two sentences' attention maps need not have the same shape ("A dog" / "Two dogs" differ in pieces, and so
may the translations), so both are first put on common slots: the pieces the two sequences share (found by
`difflib.SequenceMatcher`) are one slot each, and each stretch where they differ is one slot, holding the
stretch's pieces (summed over keys, averaged over queries, as explorer/analysis/words.py merges pieces into
words). A head's distance is then the mean, over the query slots both sentences have, of the total variation
distance ½ Σ_k |p_k − q_k| between the two rows: 0 for the same pattern, 1 for patterns with no key in common.
Identical sentences give 0 for every head.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.inference import Translation
from explorer.paper import FAMILIES, HEAD_CODES


@dataclass(frozen=True)
class PreparedPair:
    """A pair of source sentences and what differs between them (an English message id)."""

    kind: str  # message id: "Number", "Gender", …
    first: str
    second: str


# In the shipped model's domain (Multi30k image captions). The "it" pair changes what "it" refers to: the cat
# (die Katze: "sie") or the bed (das Bett: "es"); the shipped model translates the two pronouns so.
PREPARED_PAIRS: tuple[PreparedPair, ...] = (
    PreparedPair("Number", "A dog runs through the grass.", "Two dogs run through the grass."),
    PreparedPair("Gender", "A man is riding a bike.", "A woman is riding a bike."),
    PreparedPair(
        "What “it” refers to",
        "A woman puts the cat on the bed because it is tired.",
        "A woman puts the cat on the bed because it is soft.",
    ),
    PreparedPair("Word order", "A dog chases a cat.", "A cat chases a dog."),
)


def common_slots(a: Sequence[str], b: Sequence[str]) -> tuple[list[list[int]], list[list[int]]]:
    """Positions of `a` and of `b` grouped into the same number of slots, in order: one slot per shared piece,
    one per differing stretch (a slot may be empty on one side, where the other inserted pieces)."""
    slots_a: list[list[int]] = []
    slots_b: list[list[int]] = []
    matcher = difflib.SequenceMatcher(a=list(a), b=list(b), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            slots_a.extend([i] for i in range(a0, a1))
            slots_b.extend([j] for j in range(b0, b1))
        else:
            slots_a.append(list(range(a0, a1)))
            slots_b.append(list(range(b0, b1)))
    return slots_a, slots_b


def _on_slots(weights: np.ndarray, rows: list[list[int]], cols: list[list[int]]) -> np.ndarray:
    """(..., q, k) -> (..., len(rows), len(cols)): keys summed per slot, queries averaged (an empty row slot
    is all zeros; callers skip it)."""
    w = np.asarray(weights, dtype=np.float64)
    row_matrix = np.zeros((len(rows), w.shape[-2]))
    for s, group in enumerate(rows):
        if group:
            row_matrix[s, group] = 1.0 / len(group)
    col_matrix = np.zeros((w.shape[-1], len(cols)))
    for s, group in enumerate(cols):
        col_matrix[group, s] = 1.0
    return row_matrix @ w @ col_matrix


def pattern_distance(
    first: np.ndarray,
    second: np.ndarray,
    queries: tuple[Sequence[str], Sequence[str]],
    keys: tuple[Sequence[str], Sequence[str]],
) -> np.ndarray:
    """Per-head distance between two sentences' attention of one family.

    first (layers, heads, q1, k1), second (layers, heads, q2, k2); queries / keys: each sentence's query and key
    pieces. Returns (layers, heads) in [0, 1]: the mean total variation distance over the query slots both have.
    """
    rows_a, rows_b = common_slots(*queries)
    cols_a, cols_b = common_slots(*keys)
    a, b = _on_slots(first, rows_a, cols_a), _on_slots(second, rows_b, cols_b)
    both = [s for s, (ra, rb) in enumerate(zip(rows_a, rows_b, strict=True)) if ra and rb]
    assert both, "the two sentences share no query slot"
    tv = 0.5 * np.abs(a[..., both, :] - b[..., both, :]).sum(-1)  # (layers, heads, slots)
    return tv.mean(-1)


@dataclass(frozen=True)
class HeadChange:
    family: str
    layer: int  # 0-based
    head: int  # 0-based
    distance: float

    @property
    def name(self) -> str:
        return f"{HEAD_CODES[self.family]}.{self.layer}.{self.head}"


def _family_pieces(translation: Translation, family: str) -> tuple[list[str], list[str]]:
    """(queries, keys) of a family, the conventions of explorer/inference.py."""
    if family == "encoder_self":
        return translation.source_pieces, translation.source_pieces
    if family == "decoder_self":
        return translation.target_input_pieces, translation.target_input_pieces
    return translation.target_output_pieces, translation.source_pieces


def head_changes(first: Translation, second: Translation) -> list[HeadChange]:
    """Every head of every family, the most changed first (ties in family, layer, head order). Both
    translations need their attention (`translate(..., with_attention=True)`)."""
    assert first.attention is not None and second.attention is not None, "translate with with_attention=True"
    changes: list[HeadChange] = []
    for family in FAMILIES:
        q1, k1 = _family_pieces(first, family)
        q2, k2 = _family_pieces(second, family)
        distance = pattern_distance(first.attention.family(family), second.attention.family(family), (q1, q2), (k1, k2))
        changes.extend(
            HeadChange(family, layer, head, float(distance[layer, head]))
            for layer in range(distance.shape[0])
            for head in range(distance.shape[1])
        )
    return sorted(changes, key=lambda c: -c.distance)
