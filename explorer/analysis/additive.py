"""Additive attention beside dot-product attention (Section 3.2.1).

The paper names the two common compatibility functions: additive attention (Bahdanau et al.), a feed-forward
network with one hidden layer, score(q, k) = vᵀ tanh(W₁q + W₂k), and dot-product attention, q·k. "While the two
are similar in theoretical complexity, dot-product attention is much faster and more space-efficient in
practice": it is one matrix product, while the additive score builds a d_a-vector for every query-key pair.
"While for small values of d_k the two mechanisms perform similarly, additive attention outperforms dot product
attention without scaling for larger values of d_k": W₁q + W₂k keeps its size as d_k grows (the weights are
scaled like any layer's), and tanh bounds it, so the softmax does not saturate; the unscaled q·k grows like √d_k.
The paper keeps the dot product and divides it by √d_k.

The additive weights here are not trained: they are drawn, seeded, at the usual initial scale (N(0, 1/d_k) for
W₁, W₂, N(0, 1/d_a) for v), so the page can show them and anyone can recompute a score by hand.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.step_by_step import softmax

ATTENTION_DIM = 64  # d_a, the additive network's hidden width


@dataclass(frozen=True)
class AdditiveWeights:
    w1: np.ndarray  # (d_a, d_k), applied to the query
    w2: np.ndarray  # (d_a, d_k), applied to the key
    v: np.ndarray  # (d_a,)
    seed: int


def seeded_weights(d_k: int, d_a: int = ATTENTION_DIM, seed: int = 0) -> AdditiveWeights:
    """W₁, W₂ ~ N(0, 1/d_k) and v ~ N(0, 1/d_a), from `seed`."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((d_a, d_k)) / math.sqrt(d_k)
    w2 = rng.standard_normal((d_a, d_k)) / math.sqrt(d_k)
    return AdditiveWeights(w1, w2, rng.standard_normal(d_a) / math.sqrt(d_a), seed)


def additive_scores(queries: np.ndarray, keys: np.ndarray, weights: AdditiveWeights) -> np.ndarray:
    """queries (..., q, d_k), keys (..., k, d_k) -> scores (..., q, k) = vᵀ tanh(W₁q + W₂k)."""
    projected_q = queries @ weights.w1.T  # (..., q, d_a)
    projected_k = keys @ weights.w2.T  # (..., k, d_a)
    return np.tanh(projected_q[..., :, None, :] + projected_k[..., None, :, :]) @ weights.v


@dataclass(frozen=True)
class QueryComparison:
    """One query against its keys, scored both ways; arrays over keys are (k,)."""

    scaled_dot: np.ndarray  # q·k_j / √d_k (Eq. 1)
    additive: np.ndarray  # vᵀ tanh(W₁q + W₂k_j)
    dot_weights: np.ndarray  # softmax over the allowed keys (0 where masked)
    additive_weights: np.ndarray


def _masked_softmax(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    return softmax(np.where(allowed, scores, -np.inf))


def compare_query(q: np.ndarray, keys: np.ndarray, allowed: np.ndarray, weights: AdditiveWeights) -> QueryComparison:
    """q (d_k,), keys (k, d_k), allowed (k,) bool: the scaled dot-product and the additive scores and weights."""
    scaled = keys @ q / math.sqrt(q.shape[-1])
    additive = additive_scores(q[None, :], keys, weights)[0]
    return QueryComparison(scaled, additive, _masked_softmax(scaled, allowed), _masked_softmax(additive, allowed))


@dataclass(frozen=True)
class Timing:
    """Seconds for all n × n scores of one head, the best of the repeats (CPU, float32, one thread pool)."""

    n: int
    d_k: int
    dot_s: float
    additive_s: float

    @property
    def ratio(self) -> float:
        return self.additive_s / self.dot_s


def _best_of(repeats: int, compute: Callable[[], object]) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        compute()
        best = min(best, time.perf_counter() - start)
    return best


@torch.inference_mode()
def time_scores(
    lengths: Sequence[int], d_k: int, d_a: int = ATTENTION_DIM, repeats: int = 5, seed: int = 0
) -> list[Timing]:
    """Time Q Kᵀ against vᵀ tanh(W₁Q + W₂K) (every pair) for each n, with torch on this machine's CPU. Both are
    O(n²·d) operations; the additive one also writes an (n, n, d_a) tensor and a tanh of every entry."""
    generator = torch.Generator().manual_seed(seed)
    w1, w2 = torch.randn(d_a, d_k, generator=generator), torch.randn(d_a, d_k, generator=generator)
    v = torch.randn(d_a, generator=generator)
    found = []
    for n in lengths:
        q, k = torch.randn(n, d_k, generator=generator), torch.randn(n, d_k, generator=generator)

        def dot(q: torch.Tensor = q, k: torch.Tensor = k) -> torch.Tensor:
            return q @ k.T / math.sqrt(d_k)

        def additive(q: torch.Tensor = q, k: torch.Tensor = k) -> torch.Tensor:
            return torch.tanh((q @ w1.T)[:, None] + (k @ w2.T)[None]) @ v

        found.append(Timing(int(n), d_k, _best_of(repeats, dot), _best_of(repeats, additive)))
    return found


@dataclass(frozen=True)
class SaturationRow:
    """Mean largest softmax weight and mean entropy (nats) over random queries, for one d_k."""

    d_k: int
    max_weight: dict[str, float]  # by scoring: "dot", "scaled_dot", "additive"
    entropy: dict[str, float]


SCORINGS = ("dot", "scaled_dot", "additive")


def saturation_curve(
    d_ks: Sequence[int], n_keys: int = 10, samples: int = 300, d_a: int = ATTENTION_DIM, seed: int = 0
) -> list[SaturationRow]:
    """For each d_k: `samples` queries and `n_keys` keys with N(0, 1) components (seeded), scored as q·k,
    q·k/√d_k and vᵀ tanh(W₁q + W₂k); the softmax's largest weight and entropy, averaged over the queries."""
    assert n_keys >= 2 and samples >= 1, f"expected n_keys >= 2 and samples >= 1, got {n_keys}, {samples}"
    rng = np.random.default_rng(seed)
    rows = []
    for d_k in d_ks:
        q = rng.standard_normal((samples, 1, d_k))
        k = rng.standard_normal((samples, n_keys, d_k))
        dot = (q @ k.transpose(0, 2, 1))[:, 0]  # (samples, n_keys)
        scores = {
            "dot": dot,
            "scaled_dot": dot / math.sqrt(d_k),
            "additive": additive_scores(q, k, seeded_weights(d_k, d_a, seed))[:, 0],
        }
        weights = {name: softmax(s) for name, s in scores.items()}
        rows.append(
            SaturationRow(
                int(d_k),
                {name: float(p.max(axis=1).mean()) for name, p in weights.items()},
                {
                    name: float(-(p * np.log(np.clip(p, 1e-300, None))).sum(axis=1).mean())
                    for name, p in weights.items()
                },
            )
        )
    return rows
