"""Scaled dot-product attention one stage at a time, with the loaded model's numbers (Section 3.2, Eq. 1).

`inspect_translation` runs one teacher-forced pass with `inspect=(family, layer)` and keeps the
`AttentionInternals` of that one module; `head_steps` cuts one head and one query out of them:

    q, K, V            projected vectors  (q = x W_i^Q, K = X W_i^K, V = X W_i^V)
    q·Kᵀ               raw scores
    ÷ √d_k             scaled scores
    mask               causal (decoder self-attention) and padding: -inf where forbidden
    softmax            the attention weights (the row the heat maps show)
    Σ w_j v_j          this head's output
    Concat(heads) W^O  the module's output (Section 3.2.2)

`sqrt_dk_demo` is the footnote of Section 3.2.1 in numbers: for q, k with independent unit-variance
components, q·k has variance d_k, so without the 1/√d_k the softmax saturates and its gradient vanishes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from explorer.inference import Translation
from explorer.model.attention import AttentionInternals
from explorer.model.transformer import Transformer
from explorer.paper import FAMILIES


@dataclass(frozen=True)
class InspectedAttention:
    """The internals of one attention module for one sentence pair, as float64 numpy, padding removed.

    query_pieces label the query rows, key_pieces the key columns: source pieces for encoder
    self-attention, the decoder input "<s> y1 … y(n-1)" for decoder self-attention, and decoder
    input (queries) × source pieces (keys) for cross-attention.
    """

    family: str
    layer: int
    query_pieces: list[str]
    key_pieces: list[str]
    query: np.ndarray  # (heads, q, d_k)
    key: np.ndarray  # (heads, k, d_k)
    value: np.ndarray  # (heads, k, d_v)
    scores: np.ndarray  # (heads, q, k) Q Kᵀ
    scaled_scores: np.ndarray  # (heads, q, k) Q Kᵀ / √d_k
    mask: np.ndarray  # (q, k) bool, True = may attend (all True where the module had no mask)
    masked_scores: np.ndarray  # (heads, q, k), -inf where masked
    weights: np.ndarray  # (heads, q, k) softmax
    head_outputs: np.ndarray  # (heads, q, d_v)
    concatenated: np.ndarray  # (q, heads · d_v)
    output: np.ndarray  # (q, d_model)
    w_o: np.ndarray  # (d_model, heads · d_v): output = concatenated @ w_oᵀ + b_o
    b_o: np.ndarray  # (d_model,)

    @property
    def n_heads(self) -> int:
        return self.query.shape[0]

    @property
    def d_k(self) -> int:
        return self.query.shape[-1]


def decoder_input(output_ids: Sequence[int], bos_id: int, max_len: int) -> list[int]:
    """Teacher forcing: the decoder reads "<s> y1 … y(n-1)" to produce y1 … yn."""
    return ([bos_id] + [int(t) for t in output_ids[:-1]])[:max_len]


@torch.inference_mode()
def inspect_translation(model: Transformer, translation: Translation, family: str, layer: int) -> InspectedAttention:
    """One teacher-forced pass of `model` over a translation (source, its output as the decoder input),
    keeping every intermediate of one attention module (`family`, 0-based `layer`).

    Rows and columns are labelled as in explorer.inference: encoder self-attention source × source,
    decoder self-attention decoder input ("<s> y1 …") × itself, cross-attention produced target
    ("y1 … </s>") × source.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    config = model.config
    n_layers = config.n_encoder_layers if family == "encoder_self" else config.n_decoder_layers
    if not 0 <= layer < n_layers:
        raise ValueError(f"layer must be in 0..{n_layers - 1} for {family}, got {layer}")
    target_in = decoder_input(translation.output_ids, config.bos_id, config.max_len)
    device = next(model.parameters()).device
    src = torch.tensor([list(translation.source_ids)], dtype=torch.long, device=device)
    tgt = torch.tensor([target_in], dtype=torch.long, device=device)
    internals = model(src, tgt, inspect=(family, layer)).internals
    assert internals is not None, f"the model returned no internals for inspect=({family!r}, {layer})"
    if family == "encoder_self":
        module = model.encoder_layers[layer].self_attention
        queries, keys = translation.source_pieces, translation.source_pieces
    elif family == "decoder_self":
        module = model.decoder_layers[layer].self_attention
        queries, keys = translation.target_input_pieces, translation.target_input_pieces
    else:
        module = model.decoder_layers[layer].cross_attention
        queries, keys = translation.target_output_pieces, translation.source_pieces
    return _to_numpy(internals, family, layer, list(queries), list(keys), module.w_o.weight, module.w_o.bias)


def _to_numpy(
    internals: AttentionInternals,
    family: str,
    layer: int,
    queries: list[str],
    keys: list[str],
    w_o: torch.Tensor,
    b_o: torch.Tensor,
) -> InspectedAttention:
    def first(t: torch.Tensor) -> np.ndarray:
        return t[0].double().cpu().numpy()

    q_len, k_len = len(queries), len(keys)
    scores = first(internals.scores)
    if internals.mask is None:
        mask = np.ones((q_len, k_len), dtype=bool)
    else:  # broadcast (1 | batch, 1, 1 | q, k) to (q, k)
        mask = np.broadcast_to(internals.mask[0, 0].cpu().numpy(), (q_len, k_len)).copy()
    assert scores.shape[1:] == (q_len, k_len), f"scores {scores.shape} do not match {q_len} queries × {k_len} keys"
    return InspectedAttention(
        family,
        layer,
        queries,
        keys,
        first(internals.query),
        first(internals.key),
        first(internals.value),
        scores,
        first(internals.scaled_scores),
        mask,
        first(internals.masked_scores),
        first(internals.weights),
        first(internals.head_outputs),
        first(internals.concatenated),
        first(internals.output),
        w_o.detach().double().cpu().numpy(),
        b_o.detach().double().cpu().numpy(),
    )


@dataclass(frozen=True)
class HeadSteps:
    """Every stage of Eq. 1 for one head and one query position, plus the recomputation that checks it.

    Arrays over keys are (k,); `q` is (d_k,), `keys` (k, d_k), `values` (k, d_v).
    """

    head: int
    query_index: int
    query_piece: str
    key_pieces: list[str]
    d_k: int
    q: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    scores: np.ndarray  # q·k_j
    scaled: np.ndarray  # q·k_j / √d_k
    allowed: np.ndarray  # bool
    masked: np.ndarray  # scaled, -inf where not allowed
    weights: np.ndarray  # softmax(masked)
    weighted_values: np.ndarray  # (k, d_v) w_j v_j
    head_output: np.ndarray  # (d_v,) Σ_j w_j v_j
    all_head_outputs: np.ndarray  # (heads, d_v) of this query
    concatenated: np.ndarray  # (heads · d_v,)
    output: np.ndarray  # (d_model,) Concat W^O + b, as the model computed it
    recomputed_error: float  # max |our step-by-step recomputation − the model's values| over every stage

    @property
    def n_masked(self) -> int:
        """How many keys the mask hides from this query."""
        return int((~self.allowed).sum())

    def weighted_terms(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """The visible keys' w_j·v_j rows and their sum (the head's output) under them, cut to the first `width`
        dimensions: (visible key indices (m,), rows (m + 1, min(width, d_v)))."""
        visible = np.flatnonzero(self.allowed)
        rows = np.vstack([self.weighted_values[visible][:, :width], self.head_output[None, :width]])
        return visible, rows

    def difference_from(self, attention_row: np.ndarray) -> float:
        """max |softmax row − `attention_row`|: this head's weights against an attention map's row (k,)."""
        return float(np.abs(self.weights - attention_row).max())


def head_steps(inspected: InspectedAttention, head: int, query_index: int) -> HeadSteps:
    """Cut head `head` (0-based) and query row `query_index` out of `inspected`, recomputing each stage."""
    n_heads, q_len = inspected.n_heads, len(inspected.query_pieces)
    if not 0 <= head < n_heads:
        raise ValueError(f"head must be in 0..{n_heads - 1}, got {head}")
    if not 0 <= query_index < q_len:
        raise ValueError(f"query must be in 0..{q_len - 1}, got {query_index}")
    q = inspected.query[head, query_index]
    keys, values = inspected.key[head], inspected.value[head]
    allowed = inspected.mask[query_index]
    # Recompute every stage from q, K, V in float64 and hold it against what the model computed.
    scores = keys @ q
    scaled = scores / math.sqrt(inspected.d_k)
    masked = np.where(allowed, scaled, -np.inf)
    weights = softmax(masked)
    weighted = weights[:, None] * values
    head_output = weighted.sum(axis=0)
    output = inspected.w_o @ inspected.concatenated[query_index] + inspected.b_o
    model = inspected
    checks = [
        (scores, model.scores[head, query_index]),
        (scaled, model.scaled_scores[head, query_index]),
        (weights, model.weights[head, query_index]),
        (head_output, model.head_outputs[head, query_index]),
        (model.head_outputs[:, query_index].reshape(-1), model.concatenated[query_index]),
        (output, model.output[query_index]),
    ]
    error = max(float(np.abs(ours - theirs).max()) for ours, theirs in checks)
    return HeadSteps(
        head,
        query_index,
        inspected.query_pieces[query_index],
        list(inspected.key_pieces),
        inspected.d_k,
        q,
        keys,
        values,
        model.scores[head, query_index],
        model.scaled_scores[head, query_index],
        allowed,
        model.masked_scores[head, query_index],
        model.weights[head, query_index],
        weighted,
        model.head_outputs[head, query_index],
        model.head_outputs[:, query_index],
        model.concatenated[query_index],
        model.output[query_index],
        error,
    )


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax; -inf entries get weight 0."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def stage_rows(steps: HeadSteps) -> list[dict[str, Any]]:
    """One row per key: the numbers of every stage for this query, for a table."""
    return [
        {
            "key": piece,
            "q·k": float(steps.scores[j]),
            "÷ √d_k": float(steps.scaled[j]),
            "mask": "allowed" if steps.allowed[j] else "masked (−∞)",
            "softmax": float(steps.weights[j]),
        }
        for j, piece in enumerate(steps.key_pieces)
    ]


# ---- why √d_k ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScalingRow:
    """Statistics of attention logits over random q, k (unit-variance components) for one d_k."""

    d_k: int
    variance_unscaled: float  # Var(q·k) ≈ d_k
    variance_scaled: float  # Var(q·k / √d_k) ≈ 1
    max_weight_unscaled: float  # mean over samples of the largest softmax weight
    max_weight_scaled: float
    entropy_unscaled: float  # mean softmax entropy in nats (uniform = ln n_keys)
    entropy_scaled: float
    gradient_unscaled: float  # mean Frobenius norm of the softmax Jacobian diag(p) − p pᵀ
    gradient_scaled: float


def _softmax_stats(logits: np.ndarray) -> tuple[float, float, float]:
    """logits (samples, keys) -> mean max weight, mean entropy, mean ‖∂softmax/∂logits‖_F."""
    p = softmax(logits)
    entropy = -(p * np.log(np.clip(p, 1e-300, None))).sum(axis=1)
    # ‖diag(p) − p pᵀ‖_F² = Σ p_i² − 2 Σ p_i³ + (Σ p_i²)²
    s2, s3 = (p**2).sum(axis=1), (p**3).sum(axis=1)
    jacobian = np.sqrt(np.clip(s2 - 2 * s3 + s2**2, 0.0, None))
    return float(p.max(axis=1).mean()), float(entropy.mean()), float(jacobian.mean())


def sqrt_dk_demo(d_ks: Sequence[int], n_keys: int = 10, samples: int = 1000, seed: int = 0) -> list[ScalingRow]:
    """For each d_k: draw `samples` queries and `n_keys` keys with N(0, 1) components (seeded) and measure
    the logits and the softmax with and without the 1/√d_k of Eq. 1."""
    assert n_keys >= 2 and samples >= 2, f"expected n_keys, samples >= 2, got {n_keys}, {samples}"
    rng = np.random.default_rng(seed)
    rows = []
    for d_k in d_ks:
        assert d_k >= 1, f"d_k must be >= 1, got {d_k}"
        q = rng.standard_normal((samples, d_k))
        # One key column at a time keeps memory at samples × d_k even for d_k = 1024.
        logits = np.stack([(q * rng.standard_normal((samples, d_k))).sum(axis=1) for _ in range(n_keys)], axis=1)
        scaled = logits / math.sqrt(d_k)
        unscaled_stats, scaled_stats = _softmax_stats(logits), _softmax_stats(scaled)
        rows.append(
            ScalingRow(
                int(d_k),
                float(logits.var()),
                float(scaled.var()),
                unscaled_stats[0],
                scaled_stats[0],
                unscaled_stats[1],
                scaled_stats[1],
                unscaled_stats[2],
                scaled_stats[2],
            )
        )
    return rows


def scaling_example(d_k: int, n_keys: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One random query against `n_keys` keys (seeded): softmax weights without and with 1/√d_k."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d_k)
    k = rng.standard_normal((n_keys, d_k))
    logits = k @ q
    return softmax(logits), softmax(logits / math.sqrt(d_k))


def scaling_table(rows: Sequence[ScalingRow]) -> list[dict[str, Any]]:
    """The demo's numbers, one row per d_k, for a table ("÷√d" columns are with the scaling of Eq. 1)."""
    return [
        {
            "d_k": r.d_k,
            "Var(q·k)": r.variance_unscaled,
            "Var ÷√d": r.variance_scaled,
            "max weight": r.max_weight_unscaled,
            "max weight ÷√d": r.max_weight_scaled,
            "entropy": r.entropy_unscaled,
            "entropy ÷√d": r.entropy_scaled,
            "‖∂softmax‖": r.gradient_unscaled,
            "‖∂softmax‖ ÷√d": r.gradient_scaled,
        }
        for r in rows
    ]


def scaling_series(rows: Sequence[ScalingRow]) -> tuple[list[int], dict[str, list[float]], dict[str, list[float]]]:
    """(d_ks, unscaled, scaled) for `explorer.figures.step_by_step.scaling_figure`: one series per statistic."""
    names = {
        "Var(q·k)": ("variance_unscaled", "variance_scaled"),
        "largest weight": ("max_weight_unscaled", "max_weight_scaled"),
        "gradient ‖∂softmax‖": ("gradient_unscaled", "gradient_scaled"),
    }
    unscaled = {name: [getattr(r, fields[0]) for r in rows] for name, fields in names.items()}
    scaled = {name: [getattr(r, fields[1]) for r in rows] for name, fields in names.items()}
    return [r.d_k for r in rows], unscaled, scaled
