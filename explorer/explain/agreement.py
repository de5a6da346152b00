"""Does attention agree with attribution? Spearman rank correlation between an output token's attribution over
the source pieces and each kind of attention over the same pieces.

The kinds: the raw cross-attention of every layer and head and each layer's mean over heads, the
value-weighted cross-attention (explorer/explain/value_weighted.py) likewise, and the rollout through every
layer (explorer/analysis/rollout.py). Attribution is compared by magnitude, |a_j|: attention is never
negative, and a piece that pushes the output down matters as much as one that pushes it up. A rank correlation
asks only whether the two order the source pieces alike, not whether their scales match (Jain & Wallace, 2019,
compare attention and gradients the same way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.explain.attribution import TokenAttribution

KINDS: tuple[str, ...] = ("raw", "value_weighted", "rollout")
METHODS: tuple[str, ...] = ("gradient_x_input", "integrated_gradients")


def ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given their mean rank (as Spearman's ρ needs): [3, 1, 3] -> [2.5, 1, 2.5]."""
    v = np.asarray(values, dtype=np.float64).ravel()
    order = np.argsort(v, kind="mergesort")
    ranked = np.empty(len(v), dtype=np.float64)
    ranked[order] = np.arange(1, len(v) + 1)
    for value in np.unique(v):
        tied = v == value
        if tied.sum() > 1:
            ranked[tied] = ranked[tied].mean()
    return ranked


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ: the Pearson correlation of the ranks; nan where either side is constant (no order)."""
    x, y = ranks(a), ranks(b)
    assert x.shape == y.shape, f"expected two vectors of one length, got {x.shape} and {y.shape}"
    x, y = x - x.mean(), y - y.mean()
    scale = math.sqrt(float((x * x).sum() * (y * y).sum()))
    return float((x * y).sum() / scale) if scale > 0 else float("nan")


@dataclass(frozen=True)
class Agreement:
    """ρ between one attention (kind, 0-based layer, head; head None = the layer's mean over heads, layer None
    = rollout through every layer) and one attribution method, for one output token."""

    kind: str
    layer: int | None
    head: int | None
    method: str
    rho: float


def token_agreement(
    attribution: TokenAttribution, cross: np.ndarray, weighted_cross: np.ndarray, rollout: np.ndarray
) -> list[Agreement]:
    """Every kind against both methods for one output token.

    cross, weighted_cross (layers, heads, tgt, src): raw weights and value-weighted shares of the
    cross-attention; rollout (tgt, src) (`explorer.analysis.rollout.output_attribution`). The row compared is
    `attribution.position`.
    """
    row = attribution.position
    out: list[Agreement] = []
    for method in METHODS:
        target = np.abs(getattr(attribution, method))
        for kind, maps in (("raw", cross), ("value_weighted", weighted_cross)):
            layers = np.asarray(maps, dtype=np.float64)[:, :, row]  # (layers, heads, src)
            assert layers.shape[-1] == target.shape[0], (
                f"attention over {layers.shape[-1]} source pieces, attribution over {target.shape[0]}"
            )
            for layer in range(layers.shape[0]):
                out.append(Agreement(kind, layer, None, method, spearman(layers[layer].mean(0), target)))
                out.extend(
                    Agreement(kind, layer, head, method, spearman(layers[layer, head], target))
                    for head in range(layers.shape[1])
                )
        out.append(Agreement("rollout", None, None, method, spearman(np.asarray(rollout)[row], target)))
    return out


def mean_agreement(per_token: Sequence[Sequence[Agreement]]) -> list[Agreement]:
    """ρ averaged over output tokens (nan ones left out), row by row: every token's list must come from
    `token_agreement` on one translation (the same rows in the same order)."""
    assert per_token, "no output tokens to average over"
    out = []
    for rows in zip(*per_token, strict=True):
        first = rows[0]
        assert all(
            (r.kind, r.layer, r.head, r.method) == (first.kind, first.layer, first.head, first.method) for r in rows
        ), "the tokens' agreement rows differ"
        finite = [r.rho for r in rows if not math.isnan(r.rho)]
        rho = float(np.mean(finite)) if finite else float("nan")
        out.append(Agreement(first.kind, first.layer, first.head, first.method, rho))
    return out
