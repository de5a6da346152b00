"""Attention rollout (Abnar & Zuidema, 2020, "Quantifying Attention Flow in Transformers"), numpy only.

A layer's attention says where it looks among the *previous layer's* representations, which are already
mixtures of the input. Rollout follows the mixing down to the input tokens:

- each sub-layer has a residual connection, so its effective mixing is Â = 0.5·I + 0.5·A (A averaged over
  heads), with rows renormalised to sum to one (Section 3 of the paper);
- the encoder's rollout multiplies these layer by layer: R = Â_L ··· Â_1 (src × src).

For an output word we carry the same bookkeeping through the decoder (our extension to encoder-decoder
models, in the same spirit): every decoder position is a mixture of target-input tokens and source tokens.
It starts as itself; decoder self-attention mixes target positions with 0.5·I + 0.5·S; cross-attention
keeps half (the residual) and adds half of C·R, the source mixture its cross-attention reads through the
encoder. After the last layer the source part of each row, renormalised, is that output word's
attribution to source tokens, "through the cross-attention of all layers".
"""

from __future__ import annotations

import numpy as np

RESIDUAL_SHARE = 0.5  # Abnar & Zuidema: the residual counts as much as the attention it bypasses


def _mean_heads(weights: np.ndarray) -> np.ndarray:
    """(heads, q, k) -> (q, k); a (q, k) array is returned as float64."""
    w = np.asarray(weights, dtype=np.float64)
    assert w.ndim in (2, 3), f"expected (heads, q, k) or (q, k), got shape {w.shape}"
    return w.mean(axis=0) if w.ndim == 3 else w


def _rows_to_one(m: np.ndarray) -> np.ndarray:
    total = m.sum(axis=-1, keepdims=True)
    return np.divide(m, total, out=np.zeros_like(m), where=total > 0)


def residual_attention(weights: np.ndarray) -> np.ndarray:
    """Â = rownorm(0.5·I + 0.5·mean_heads(A)) for self-attention: (heads, n, n) -> (n, n)."""
    a = _mean_heads(weights)
    assert a.shape[0] == a.shape[1], f"self-attention must be square, got {a.shape}"
    return _rows_to_one(RESIDUAL_SHARE * np.eye(a.shape[0]) + (1 - RESIDUAL_SHARE) * a)


def encoder_rollout(encoder_self: np.ndarray) -> np.ndarray:
    """(layers, heads, src, src) -> (layers, src, src): row l is the rollout up to and including layer l.

    out[-1][i, j]: how much of the top encoder state at position i comes from input token j.
    """
    w = np.asarray(encoder_self, dtype=np.float64)
    assert w.ndim == 4, f"expected (layers, heads, src, src), got shape {w.shape}"
    rolled, current = [], np.eye(w.shape[-1])
    for layer in w:
        current = residual_attention(layer) @ current
        rolled.append(current)
    return np.stack(rolled)


def output_attribution(encoder_self: np.ndarray, decoder_self: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """Each output token's attribution to source tokens through every layer: (tgt, src), rows sum to one.

    encoder_self (L_enc, heads, src, src); decoder_self (L_dec, heads, tgt, tgt); cross (L_dec, heads, tgt, src),
    the arrays of `SentenceAttention` (rows of cross/decoder_self are the output tokens).
    """
    memory = encoder_rollout(encoder_self)[-1]  # (src, src)
    dec = np.asarray(decoder_self, dtype=np.float64)
    crs = np.asarray(cross, dtype=np.float64)
    assert dec.ndim == 4 and crs.ndim == 4 and dec.shape[0] == crs.shape[0], (
        f"decoder_self {dec.shape} and cross {crs.shape} must be (layers, heads, tgt, ·) with the same layers"
    )
    tgt, src = crs.shape[2], crs.shape[3]
    from_target = np.eye(tgt)  # (tgt, tgt): share of each target-input token
    from_source = np.zeros((tgt, src))  # (tgt, src): share of each source token
    for self_weights, cross_weights in zip(dec, crs, strict=True):
        mix = residual_attention(self_weights)
        from_target, from_source = mix @ from_target, mix @ from_source
        reads = _mean_heads(cross_weights) @ memory  # (tgt, src)
        from_target = RESIDUAL_SHARE * from_target
        from_source = RESIDUAL_SHARE * from_source + (1 - RESIDUAL_SHARE) * reads
    return _rows_to_one(from_source)


def last_layer_cross(cross: np.ndarray) -> np.ndarray:
    """The plain reading: top decoder layer's cross-attention averaged over heads, (tgt, src)."""
    c = np.asarray(cross, dtype=np.float64)
    assert c.ndim == 4, f"expected (layers, heads, tgt, src), got shape {c.shape}"
    return c[-1].mean(axis=0)


def disagreements(rollout: np.ndarray, plain: np.ndarray) -> list[tuple[int, int, int]]:
    """Rows whose strongest source token differs: (output row, rollout's argmax, plain argmax)."""
    a, b = np.asarray(rollout).argmax(axis=-1), np.asarray(plain).argmax(axis=-1)
    return [(int(row), int(a[row]), int(b[row])) for row in np.flatnonzero(a != b)]
