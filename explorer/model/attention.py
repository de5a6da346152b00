"""Multi-head scaled dot-product attention (Section 3.2, Eq. 1 and Figure 2).

Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V, computed per head and concatenated through W^O.

Two paths give the same numbers (a test holds them together):
- the fused kernel `torch.nn.functional.scaled_dot_product_attention` when nobody asked for weights —
  the default, and it costs nothing extra;
- the explicit formula when weights (or the step-by-step internals) are requested.

Nothing is ever stored on the module: weights, caches and internals are return values, because one
model instance is shared by every browser session and every decoding step.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from explorer.model.head_mask import HeadSelection

# The SDPA kernels a CUDA call may pick from: not cuDNN's, which torch picks first on Hopper GPUs for bf16.
# cuDNN builds a plan for every new (batch, length) shape, and token-budget batches keep making new shapes:
# on an H200 a `base` training step on a shape not seen before took 189 ms instead of 48 ms. Flash (the
# causal self-attention) and the memory-efficient kernel (padding masks) cost the same on a repeated shape
# and nothing more on a new one. Measured by `python -m benchmarks.probes.profile_gpu_training`
# (benchmarks/RESULTS.md). float32 calls (decoding) never get cuDNN's kernel; the CPU has its own kernels.
CUDA_SDPA_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


@dataclass(frozen=True)
class KeyValue:
    """Projected keys and values of one attention module: the decoding cache entry.

    key: (batch, heads, src, d_k); value: (batch, heads, src, d_v).
    """

    key: torch.Tensor
    value: torch.Tensor

    def select(self, rows: torch.Tensor) -> KeyValue:
        """Reorder/repeat batch rows (beam search keeps the cache of the hypotheses it keeps)."""
        return KeyValue(self.key.index_select(0, rows), self.value.index_select(0, rows))

    def extend(self, other: KeyValue) -> KeyValue:
        """Append new time steps (incremental decoder self-attention)."""
        return KeyValue(torch.cat([self.key, other.key], dim=2), torch.cat([self.value, other.value], dim=2))

    @property
    def length(self) -> int:
        return self.key.shape[2]


@dataclass(frozen=True)
class AttentionInternals:
    """Every intermediate of Eq. 1 for one attention module, for the step-by-step view.

    All (batch, heads, query, key) unless noted; `masked_scores` holds -inf where the mask forbids.
    """

    query: torch.Tensor  # (batch, heads, query, d_k)
    key: torch.Tensor  # (batch, heads, key, d_k)
    value: torch.Tensor  # (batch, heads, key, d_v)
    scores: torch.Tensor  # Q Kᵀ, before scaling
    scaled_scores: torch.Tensor  # Q Kᵀ / √d_k
    mask: torch.Tensor | None  # bool, True = may attend; broadcastable to scores
    masked_scores: torch.Tensor
    weights: torch.Tensor  # softmax(masked_scores)
    head_outputs: torch.Tensor  # (batch, heads, query, d_v) = weights @ V
    concatenated: torch.Tensor  # (batch, query, heads * d_v)
    output: torch.Tensor  # (batch, query, d_model) = concatenated W^O


@dataclass(frozen=True)
class AttentionOutput:
    output: torch.Tensor  # (batch, query, d_model)
    weights: torch.Tensor | None  # (batch, heads, query, key) when requested, else None
    key_value: KeyValue  # what a decoding cache keeps for the next step
    internals: AttentionInternals | None = None


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)."""

    def __init__(
        self, d_model: int, n_heads: int, dropout: float = 0.0, d_k: int | None = None, d_v: int | None = None
    ) -> None:
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.d_k = d_k if d_k is not None else d_model // n_heads
        self.d_v = d_v if d_v is not None else d_model // n_heads
        self.w_q = nn.Linear(d_model, n_heads * self.d_k)
        self.w_k = nn.Linear(d_model, n_heads * self.d_k)
        self.w_v = nn.Linear(d_model, n_heads * self.d_v)
        self.w_o = nn.Linear(n_heads * self.d_v, d_model)
        # The paper drops out sub-layer outputs, not attention weights; kept at 0 by default so the fused
        # and explicit paths agree exactly in training too.
        self.attention_dropout = dropout

    def _split_heads(self, x: torch.Tensor, head_dim: int) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, head_dim).transpose(1, 2)

    def project_key_value(self, source: torch.Tensor) -> KeyValue:
        """source (batch, src, d_model) -> projected keys/values; computed once per sentence for cross-attention."""
        return KeyValue(self._split_heads(self.w_k(source), self.d_k), self._split_heads(self.w_v(source), self.d_v))

    def forward(
        self,
        query: torch.Tensor,
        source: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        *,
        need_weights: bool = False,
        past: KeyValue | None = None,
        static_kv: bool = False,
        with_internals: bool = False,
        heads: HeadSelection | None = None,
        causal: bool = False,
    ) -> AttentionOutput:
        """Attend from `query` (batch, q, d_model) to `source` (batch, k, d_model).

        mask: bool, True where attention is allowed, broadcastable to (batch, heads, q, k).
        past: cached keys/values. With `static_kv` they are used as they are (cross-attention while
        decoding; `source` is ignored); otherwise the new step's keys/values are appended to them.
        heads: which heads contribute to the concatenation before W^O (ablation, Michel et al. 2019); the
        weights are still those each head computed, only its output is gated.
        causal: `mask` is the causal mask of a square block (query i sees keys j <= i). The fused path then
        passes SDPA's `is_causal` instead of the mask, which lets it pick the flash kernel (on CUDA a bool
        mask forces a slower kernel that reads the mask); the explicit path reads the mask as ever.
        """
        if static_kv:
            assert past is not None, "static_kv=True needs the precomputed keys/values in `past`"
            key_value = past
        else:
            assert source is not None, "source is required unless static_kv=True"
            key_value = self.project_key_value(source)
            if past is not None:
                key_value = past.extend(key_value)
        q = self._split_heads(self.w_q(query), self.d_k)
        batch, _, q_len, _ = q.shape
        dropout_p = self.attention_dropout if self.training else 0.0

        selection = heads
        if not (need_weights or with_internals):
            # The fused kernel still returns per-head outputs, so a head mask keeps the fast path.
            is_causal = causal and past is None
            with sdpa_kernel(CUDA_SDPA_BACKENDS) if q.is_cuda else contextlib.nullcontext():
                per_head = F.scaled_dot_product_attention(
                    q,
                    key_value.key,
                    key_value.value,
                    attn_mask=None if is_causal else mask,
                    dropout_p=dropout_p,
                    is_causal=is_causal,
                )
            if selection is not None:
                per_head = selection.apply(per_head)
            concatenated = per_head.transpose(1, 2).reshape(batch, q_len, self.n_heads * self.d_v)
            return AttentionOutput(self.w_o(concatenated), None, key_value)

        scores = q @ key_value.key.transpose(-2, -1)
        scaled = scores / math.sqrt(self.d_k)
        masked = scaled if mask is None else scaled.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(masked, dim=-1)
        dropped = F.dropout(weights, p=dropout_p) if dropout_p else weights
        per_head = dropped @ key_value.value  # (batch, heads, query, d_v)
        gated = selection.apply(per_head) if selection is not None else per_head
        concatenated = gated.transpose(1, 2).reshape(batch, q_len, self.n_heads * self.d_v)
        output = self.w_o(concatenated)
        internals = None
        if with_internals:
            internals = AttentionInternals(
                q, key_value.key, key_value.value, scores, scaled, mask, masked, weights, per_head, concatenated, output
            )
        return AttentionOutput(output, weights if need_weights else None, key_value, internals)
