"""Encoder and decoder layers (Section 3.1, Figure 1) and the position-wise FFN (Section 3.3).

Each sub-layer is wrapped as LayerNorm(x + Dropout(Sublayer(x))) — post-LN, as the paper. The pre-LN
variant x + Dropout(Sublayer(LayerNorm(x))) is offered because it trains without warm-up trouble.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar, overload

import torch
from torch import nn

from explorer.config import ModelConfig
from explorer.model.attention import AttentionInternals, AttentionOutput, KeyValue, MultiHeadAttention
from explorer.model.head_mask import ALL_DECODER_HEADS, DecoderHeads, HeadSelection

LayerT = TypeVar("LayerT", bound=nn.Module)


class LayerStack(nn.ModuleList, Generic[LayerT]):
    """An `nn.ModuleList` of one layer type, typed as such: torch types every item as a plain `nn.Module`,
    so `model.encoder_layers[i].self_attention` would not type-check. Only the type checker sees the
    difference; the modules, state-dict keys and behaviour are those of `nn.ModuleList`.
    """

    if TYPE_CHECKING:

        def __init__(self, layers: Iterable[LayerT]) -> None: ...

        def __iter__(self) -> Iterator[LayerT]: ...

        @overload
        def __getitem__(self, index: slice) -> LayerStack[LayerT]: ...

        @overload
        def __getitem__(self, index: int) -> LayerT: ...

        def __getitem__(self, index: int | slice) -> LayerT | LayerStack[LayerT]: ...


# The feed-forward activations a config may name (explorer.config.ACTIVATIONS): the paper's ReLU, and the swish
# (SiLU) and exact GELU of imported Marian models, as transformers' ACT2FN computes them.
ACTIVATION_FUNCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.relu,
    "swish": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu,
}


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2 (Eq. 2), applied to each position separately; `activation` replaces
    max(0, ·) for imported models."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu") -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.activation = ACTIVATION_FUNCTIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w_2(self.activation(self.w_1(x)))


class Residual(nn.Module):
    """Residual connection + LayerNorm around one sub-layer, in post-LN or pre-LN order."""

    def __init__(self, d_model: int, dropout: float, norm_position: str) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.pre_norm = norm_position == "pre"

    def forward(self, x: torch.Tensor, sublayer: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        if self.pre_norm:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


@dataclass(frozen=True)
class LayerOutput:
    hidden: torch.Tensor  # (batch, length, d_model)
    self_weights: torch.Tensor | None  # (batch, heads, length, length)
    cross_weights: torch.Tensor | None  # (batch, heads, tgt, src); decoder only
    self_kv: KeyValue | None  # decoder only: the grown self-attention cache
    internals: AttentionInternals | None  # for the one module the caller inspects


def _attention_module(config: ModelConfig) -> MultiHeadAttention:
    return MultiHeadAttention(config.d_model, config.n_heads, 0.0, config.d_k, config.d_v)


def _feed_forward(config: ModelConfig) -> PositionwiseFeedForward:
    return PositionwiseFeedForward(config.d_model, config.d_ff, config.activation)


def _residuals(config: ModelConfig, count: int) -> tuple[Residual, ...]:
    """One residual connection with its LayerNorm (and dropout) around each of a layer's `count` sub-layers."""
    return tuple(Residual(config.d_model, config.dropout, config.norm_position) for _ in range(count))


class EncoderLayer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.self_attention = _attention_module(config)
        self.feed_forward = _feed_forward(config)
        self.attention_residual, self.ffn_residual = _residuals(config, 2)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        *,
        need_weights: bool = False,
        inspect: bool = False,
        heads: HeadSelection | None = None,
    ) -> LayerOutput:
        """x (batch, src, d_model); mask (batch, 1, 1, src) True on real tokens; heads: kept heads (None = all)."""
        result: list[AttentionOutput] = []

        def attend(h: torch.Tensor) -> torch.Tensor:
            result.append(
                self.self_attention(h, h, mask, need_weights=need_weights, with_internals=inspect, heads=heads)
            )
            return result[0].output

        x = self.attention_residual(x, attend)
        x = self.ffn_residual(x, self.feed_forward)
        return LayerOutput(x, result[0].weights, None, None, result[0].internals)


class DecoderLayer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.self_attention = _attention_module(config)
        self.cross_attention = _attention_module(config)
        self.feed_forward = _feed_forward(config)
        self.self_residual, self.cross_residual, self.ffn_residual = _residuals(config, 3)

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor | None,
        self_mask: torch.Tensor | None,
        cross_mask: torch.Tensor,
        *,
        need_weights: bool = False,
        past_self: KeyValue | None = None,
        cross_kv: KeyValue | None = None,
        inspect: str | None = None,
        heads: DecoderHeads = ALL_DECODER_HEADS,
    ) -> LayerOutput:
        """y (batch, tgt, d_model); memory (batch, src, d_model) or precomputed `cross_kv`.

        self_mask: causal mask (1, 1, tgt, tgt) — None while decoding one step with a cache, where the
        single query may see every cached position. `inspect` is "decoder_self" or "cross".
        heads: the kept heads of the self- and the cross-attention.
        """
        outputs: dict[str, AttentionOutput] = {}

        def attend_self(h: torch.Tensor) -> torch.Tensor:
            outputs["self"] = self.self_attention(
                h,
                h,
                self_mask,
                need_weights=need_weights,
                past=past_self,
                with_internals=inspect == "decoder_self",
                heads=heads.self_attention,
                causal=self_mask is not None,
            )
            return outputs["self"].output

        def attend_source(h: torch.Tensor) -> torch.Tensor:
            outputs["cross"] = self.cross_attention(
                h,
                memory,
                cross_mask,
                need_weights=need_weights,
                past=cross_kv,
                static_kv=cross_kv is not None,
                with_internals=inspect == "cross",
                heads=heads.cross_attention,
            )
            return outputs["cross"].output

        y = self.self_residual(y, attend_self)
        y = self.cross_residual(y, attend_source)
        y = self.ffn_residual(y, self.feed_forward)
        inspected = outputs["self"].internals or outputs["cross"].internals
        return LayerOutput(y, outputs["self"].weights, outputs["cross"].weights, outputs["self"].key_value, inspected)
