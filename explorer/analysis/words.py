"""From sub-word pieces to words: attention between the words a student reads, not the pieces the model sees.

The paper's models read byte-pair / word-piece units (Section 5.1), so one word can be several tokens.
A word's attention *received* is the sum over its pieces (key side: the probability mass that lands on
any of them); a word's attention *paid* is the mean over its pieces (query side: each piece's row is a
distribution, and the mean of distributions is still one). Rows of the merged matrix therefore still sum
to 1 whenever the key groups cover every key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _check_groups(groups: Sequence[Sequence[int]], n: int, side: str) -> None:
    seen: set[int] = set()
    for g, group in enumerate(groups):
        assert len(group) > 0, f"{side} group {g} is empty"
        for i in group:
            assert 0 <= i < n, f"{side} group {g} holds index {i}, expected 0 <= index < {n}"
            assert i not in seen, f"{side} index {i} is in more than one group"
            seen.add(i)


def _grouping_matrix(groups: Sequence[Sequence[int]], n: int, *, mean: bool) -> np.ndarray:
    """(len(groups), n) matrix whose row g is the indicator (or the mean weights) of group g."""
    m = np.zeros((len(groups), n), dtype=np.float64)
    for g, group in enumerate(groups):
        m[g, list(group)] = 1.0 / len(group) if mean else 1.0
    return m


def merge_attention_to_words(
    weights: np.ndarray,
    query_groups: list[list[int]],
    key_groups: list[list[int]],
) -> np.ndarray:
    """Merge piece-level attention into word-level attention.

    weights: (..., q, k) attention probabilities, any leading dims (layers, heads).
    query_groups: word -> the query positions of its pieces; key_groups likewise for keys.
    Returns (..., len(query_groups), len(key_groups)): out[..., a, b] = mean over pieces i of query
    word a of the sum over pieces j of key word b of weights[..., i, j].
    Positions in no group are dropped (e.g. '</s>'); then rows sum to less than one.
    """
    w = np.asarray(weights)
    assert w.ndim >= 2, f"expected weights (..., q, k), got shape {w.shape}"
    q, k = w.shape[-2:]
    _check_groups(query_groups, q, "query")
    _check_groups(key_groups, k, "key")
    rows = _grouping_matrix(query_groups, q, mean=True)  # (Q, q)
    cols = _grouping_matrix(key_groups, k, mean=False).T  # (k, K)
    return rows @ w @ cols  # (..., Q, K)


def average_heads(weights: np.ndarray) -> np.ndarray:
    """Mean over heads: (L, H, q, k) -> (L, q, k). Each row is still a distribution."""
    w = np.asarray(weights)
    assert w.ndim == 4, f"expected weights (layers, heads, q, k), got shape {w.shape}"
    return w.mean(axis=1)
