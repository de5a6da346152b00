"""Positional encodings (Section 3.5).

PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
Learned positional embeddings are the alternative of Table 3, row (E).
"""

from __future__ import annotations

import math

import numpy as np
import torch


def sinusoidal_encoding(
    length: int, d_model: int, dtype: torch.dtype = torch.float32, layout: str = "interleaved"
) -> torch.Tensor:
    """(length, d_model) table (float32 unless `dtype` is given); even dimensions are sines, odd ones cosines.

    layout="split" is Marian's: the same sines in the first half, the cosines in the second (computed as
    transformers' MarianSinusoidalPositionalEmbedding does, so an imported model adds the table it was trained with).
    """
    if layout == "split":
        return _split_table(length, d_model).to(dtype)
    # On the CPU whatever the default device: the model moves it with its weights, and a model built on the meta
    # device for its shapes alone (checkpoint.expected_shapes) then runs no meta op here (torch runs those through
    # Python references whose first call imports torch._dynamo: a second on a checkpoint's first load).
    cpu = torch.device("cpu")
    position = torch.arange(length, dtype=torch.float64, device=cpu).unsqueeze(1)
    # 1 / 10000^(2i/d) for i = 0 .. d/2 - 1; float64 so the table is exact to float32 precision.
    steps = torch.arange(0, d_model, 2, dtype=torch.float64, device=cpu)
    inverse_wavelength = torch.exp(steps * (-math.log(10000.0) / d_model))
    table = torch.zeros(length, d_model, dtype=torch.float64, device=cpu)
    table[:, 0::2] = torch.sin(position * inverse_wavelength)
    table[:, 1::2] = torch.cos(position * inverse_wavelength[: d_model // 2])
    return table.to(dtype)


def wavelengths(d_model: int) -> np.ndarray:
    """Wavelength of each sin/cos pair i: 2π · 10000^(2i/d_model), a geometric progression from 2π to 10000·2π."""
    return 2 * np.pi * 10000.0 ** (np.arange(0, d_model, 2) / d_model)


def shift_matrix(offset: int, d_model: int) -> torch.Tensor:
    """The fixed linear map M_k with PE(pos + k) = PE(pos) @ M_k for every pos (Section 3.5's hypothesis).

    Each sin/cos pair rotates by the angle k·ω_i, independent of pos: a block-diagonal rotation.
    Returns (d_model, d_model) float64.
    """
    omega = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    matrix = np.zeros((d_model, d_model))
    for i, w in enumerate(omega):
        c, s = math.cos(offset * w), math.sin(offset * w)
        a, b = 2 * i, 2 * i + 1
        # [sin(p+k), cos(p+k)] = [sin p, cos p] @ [[c, -s], [s, c]]
        matrix[a, a], matrix[a, b] = c, -s
        if b < d_model:
            matrix[b, a], matrix[b, b] = s, c
    return torch.from_numpy(matrix)


def _split_table(length: int, d_model: int) -> torch.Tensor:
    """Marian's table in float64: angle pos / 10000^(2⌊j/2⌋/d), sin of the even j first, cos of the odd j after."""
    j = np.arange(d_model)
    angles = np.arange(length)[:, None] / np.power(10000, 2 * (j // 2) / d_model)[None, :]
    half = (d_model + 1) // 2
    table = np.empty((length, d_model))
    table[:, :half] = np.sin(angles[:, 0::2])
    table[:, half:] = np.cos(angles[:, 1::2])
    return torch.from_numpy(table)
