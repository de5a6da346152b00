"""Positional-encoding analysis (Section 3.5): the table, what it makes similar, and why it is linear in offset.

The paper adds PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))
to the scaled token embeddings, "because we hypothesized it would allow the model to easily learn to
attend by relative positions, since for any fixed offset k, PE(pos+k) can be represented as a linear
function of PE(pos)". `shift_linearity` measures that claim; `similarity` and `offset_spread` show its
consequence, that the similarity of two positions depends on their offset only; `embedding_norms` shows
how strong the position signal is against the token signal in a loaded model (Section 3.4).

Everything here is numpy in float64; the model is only read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from explorer.model.positional import shift_matrix, sinusoidal_encoding, wavelengths
from explorer.model.transformer import Transformer

METRICS = ("cosine", "dot")


def sinusoid_table(length: int, d_model: int) -> np.ndarray:
    """(length, d_model) float64 sinusoidal encoding, the same formula the model uses."""
    assert length >= 1 and d_model >= 1, f"expected length, d_model >= 1, got {length}, {d_model}"
    return sinusoidal_encoding(length, d_model, dtype=torch.float64).numpy()


def pair_wavelengths(d_model: int) -> np.ndarray:
    """(ceil(d_model / 2),) wavelength in positions of each sin/cos pair: 2π up to (almost) 10000·2π."""
    return wavelengths(d_model)


def dims_for_wavelengths(d_model: int, targets: Sequence[float] = (12.0, 50.0, 200.0)) -> list[int]:
    """Sine dimensions (2i) whose wavelengths are closest to `targets` (in positions), plus the cosine
    partner of the first: a default set of curves that shows fast, medium and slow waves."""
    lengths = pair_wavelengths(d_model)
    pairs = [int(np.argmin(np.abs(np.log(lengths) - np.log(t)))) for t in targets]
    dims = [2 * pairs[0], 2 * pairs[0] + 1] + [2 * p for p in pairs[1:]]
    return sorted({d for d in dims if d < d_model})


def similarity(pe: np.ndarray, metric: str = "cosine") -> np.ndarray:
    """(n, n) similarity of every pair of rows of pe (n, d): dot product or cosine."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    table = np.asarray(pe, dtype=np.float64)
    assert table.ndim == 2, f"expected pe (positions, d_model), got shape {table.shape}"
    if metric == "cosine":
        norms = np.linalg.norm(table, axis=1, keepdims=True)
        table = table / np.where(norms == 0, 1.0, norms)
    return table @ table.T


def offset_spread(sim: np.ndarray) -> np.ndarray:
    """(n,) for each offset k, max − min of sim[p, p+k] over p: 0 when similarity depends on k alone."""
    m = np.asarray(sim)
    assert m.ndim == 2 and m.shape[0] == m.shape[1], f"expected a square matrix, got shape {m.shape}"
    return np.array([np.ptp(np.diagonal(m, offset=k)) for k in range(m.shape[0])])


@dataclass(frozen=True)
class ShiftCheck:
    """PE(pos + k) against PE(pos) · M_k for pos = 0 .. positions − 1 (Section 3.5's linearity claim)."""

    offset: int
    d_model: int
    positions: int
    matrix: np.ndarray  # (d_model, d_model) M_k: block-diagonal rotations by k·ω_i
    max_abs_error: float  # max over pos and dimensions of |PE(pos+k) − PE(pos) M_k|
    max_rotation_error: float  # max |M_kᵀ M_k − I|: M_k is a rotation (it preserves lengths)


def shift_linearity(offset: int, d_model: int, positions: int = 100) -> ShiftCheck:
    """Check, in float64, that one fixed matrix maps PE(pos) to PE(pos + offset) for every pos."""
    assert positions >= 1, f"expected positions >= 1, got {positions}"
    table = sinusoid_table(positions + abs(offset), d_model)
    matrix = shift_matrix(offset, d_model).numpy()
    if offset >= 0:
        start, shifted = table[:positions], table[offset : offset + positions]
    else:  # a negative offset maps PE(pos) to PE(pos − |k|); start at |k| so positions stay >= 0
        start, shifted = table[-offset : -offset + positions], table[:positions]
    error = float(np.abs(start @ matrix - shifted).max())
    rotation = float(np.abs(matrix.T @ matrix - np.eye(d_model)).max())
    return ShiftCheck(offset, d_model, positions, matrix, error, rotation)


@dataclass(frozen=True)
class EmbeddingNorms:
    """How position enters the model for one sentence (Section 3.4 and 3.5), per source position.

    x_pos = E[token]·√d_model + PE[pos]; the three norms are of the two terms and of their sum.
    """

    token_ids: list[int]
    labels: list[str]
    token: np.ndarray  # (n,) ‖E·√d_model‖
    position: np.ndarray  # (n,) ‖PE‖ (sinusoidal: √(d_model/2) for every position)
    total: np.ndarray  # (n,) ‖E·√d_model + PE‖
    cosine: np.ndarray  # (n,) cosine between the token term and the position term
    scale: float  # √d_model

    @property
    def token_to_position(self) -> float:
        """Mean over positions of ‖E·√d_model‖ / ‖PE‖ (a zero position norm counts as 1)."""
        return float(np.mean(self.token / np.where(self.position == 0, 1, self.position)))

    @property
    def mean_cosine(self) -> float:
        """Mean cosine between the token term and the position term (near 0: nearly orthogonal)."""
        return float(np.mean(self.cosine))

    def rows(self) -> list[dict[str, Any]]:
        """One row per position for a table."""
        return [
            {
                "position": i,
                "token": label,
                "‖E·√d‖": float(t),
                "‖PE‖": float(p),
                "‖sum‖": float(s),
                "cos(E, PE)": float(c),
            }
            for i, (label, t, p, s, c) in enumerate(
                zip(self.labels, self.token, self.position, self.total, self.cosine, strict=True)
            )
        ]


@torch.inference_mode()
def embedding_norms(
    model: Transformer, token_ids: Sequence[int], labels: Sequence[str], side: str = "source"
) -> EmbeddingNorms:
    """Norms of the token and position terms the model adds at its input, for `token_ids` at positions 0..n-1."""
    assert side in ("source", "target"), f"side must be 'source' or 'target', got {side!r}"
    ids = [int(i) for i in token_ids]
    assert len(ids) == len(labels), f"expected one label per token, got {len(labels)} labels for {len(ids)} ids"
    assert len(ids) <= model.config.max_len, f"{len(ids)} tokens but the model has {model.config.max_len} positions"
    embedding = model.embedding if side == "source" else model.target_embedding
    scale = float(model.embedding_scale)
    index = torch.tensor(ids, dtype=torch.long, device=embedding.weight.device)
    token = embedding.weight.detach()[index].double().cpu().numpy() * scale  # (n, d)
    position = model.positional_table(side)[: len(ids)].double().cpu().numpy()  # (n, d)
    total = token + position
    token_norm = np.linalg.norm(token, axis=1)
    position_norm = np.linalg.norm(position, axis=1)
    denominator = np.where(token_norm * position_norm == 0, 1.0, token_norm * position_norm)
    cosine = (token * position).sum(axis=1) / denominator
    return EmbeddingNorms(ids, list(labels), token_norm, position_norm, np.linalg.norm(total, axis=1), cosine, scale)


def learned_table(model: Transformer, length: int, side: str = "source") -> np.ndarray | None:
    """(min(length, max_len), d_model) learned position embeddings, or None for a sinusoidal model."""
    if model.config.positional != "learned":
        return None
    return model.positional_table(side)[:length].double().cpu().numpy()
