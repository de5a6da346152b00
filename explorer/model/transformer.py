"""The encoder-decoder Transformer (Section 3, Figure 1), attention returned as data.

`forward(src, tgt_in, need_weights=True)` returns the logits and an `AttentionMaps` with one field per
family; `need_weights=False` (the default) runs the fused kernel and the field is None.
Incremental decoding goes through `start_decoding` / `decode_step` with an explicit `DecoderCache`.
Every entry point takes an optional `head_mask` (explorer.model.head_mask) that switches heads off for
that call only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from explorer.config import ModelConfig
from explorer.model.attention import AttentionInternals, KeyValue
from explorer.model.head_mask import HeadMask, decoder_heads, layer_selection
from explorer.model.layers import DecoderLayer, EncoderLayer, LayerStack
from explorer.model.positional import sinusoidal_encoding
from explorer.paper import FAMILIES


@dataclass(frozen=True)
class SentenceAttention:
    """One sentence's attention with padding removed, as numpy arrays.

    encoder_self (layers, heads, src, src); decoder_self (layers, heads, tgt, tgt); cross (layers, heads, tgt, src).
    Rows are queries, columns are keys.
    """

    encoder_self: np.ndarray
    decoder_self: np.ndarray
    cross: np.ndarray

    def family(self, name: str) -> np.ndarray:
        if name not in FAMILIES:
            raise KeyError(f"unknown attention family {name!r}; expected one of {FAMILIES}")
        return getattr(self, name)


@dataclass(frozen=True)
class AttentionMaps:
    """Batched attention weights of every layer and head.

    encoder_self (batch, layers, heads, src, src); decoder_self (batch, layers, heads, tgt, tgt);
    cross (batch, layers, heads, tgt, src).
    """

    encoder_self: torch.Tensor
    decoder_self: torch.Tensor
    cross: torch.Tensor

    def sentence(self, index: int, src_len: int, tgt_len: int) -> SentenceAttention:
        """Cut sentence `index` out of the batch, dropping padded rows and columns."""

        def cut(t: torch.Tensor, rows: int, cols: int) -> np.ndarray:
            return t[index, :, :, :rows, :cols].detach().float().cpu().numpy()

        return SentenceAttention(
            cut(self.encoder_self, src_len, src_len),
            cut(self.decoder_self, tgt_len, tgt_len),
            cut(self.cross, tgt_len, src_len),
        )


@dataclass(frozen=True)
class EncoderOutput:
    memory: torch.Tensor  # (batch, src, d_model)
    src_mask: torch.Tensor  # (batch, 1, 1, src) bool, True on real tokens
    self_weights: torch.Tensor | None  # (batch, layers, heads, src, src)
    internals: AttentionInternals | None = None


@dataclass(frozen=True)
class ModelOutput:
    logits: torch.Tensor  # (batch, tgt, vocab)
    attention: AttentionMaps | None
    internals: AttentionInternals | None = None


@dataclass(frozen=True)
class DecoderCache:
    """Everything incremental decoding carries between steps; reorderable by beam index.

    self_kv[l]: keys/values of every generated position for decoder layer l (grows by one per step).
    cross_kv[l]: encoder memory projected once for layer l's cross-attention.
    """

    self_kv: tuple[KeyValue | None, ...]
    cross_kv: tuple[KeyValue, ...]
    src_mask: torch.Tensor  # (rows, 1, 1, src)
    position: int  # index of the next target position

    def select(self, rows: torch.Tensor) -> DecoderCache:
        return DecoderCache(
            tuple(kv.select(rows) if kv is not None else None for kv in self.self_kv),
            tuple(kv.select(rows) for kv in self.cross_kv),
            self.src_mask.index_select(0, rows),
            self.position,
        )


def causal_mask(length: int, device: torch.device) -> torch.Tensor:
    """(1, 1, length, length) bool: position i may attend to j <= i (Section 3.2.3)."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril().view(1, 1, length, length)


class Transformer(nn.Module):
    sinusoids: torch.Tensor  # (max_len, d_model) buffer, registered when positional == "sinusoidal"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        d, vocab = config.d_model, config.vocab_size
        # Section 3.4: one weight matrix for both embeddings and the pre-softmax projection.
        self.embedding = nn.Embedding(vocab, d)
        target_vocab = config.output_vocab_size
        if config.share_embeddings:
            self.target_embedding = self.embedding
        else:
            self.target_embedding = nn.Embedding(target_vocab, d)
            if not config.tie_target_output:
                self.output_projection = nn.Linear(d, target_vocab, bias=False)
        if config.output_bias:  # Marian's final_logits_bias
            self.logits_bias = nn.Parameter(torch.zeros(target_vocab))
        if config.positional == "learned":
            self.source_positions = nn.Embedding(config.max_len, d)
            self.target_positions = nn.Embedding(config.max_len, d)
        else:
            table = sinusoidal_encoding(config.max_len, d, layout=config.position_layout)
            self.register_buffer("sinusoids", table, persistent=False)
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.encoder_layers = LayerStack(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.decoder_layers = LayerStack(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        pre_norm = config.norm_position == "pre"
        # Pre-LN leaves the residual stream un-normalised, so it needs a final norm on each side.
        self.encoder_norm = nn.LayerNorm(d) if pre_norm else nn.Identity()
        self.decoder_norm = nn.LayerNorm(d) if pre_norm else nn.Identity()
        self.embedding_scale = math.sqrt(d)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1 and "embedding" not in name and "positions" not in name:
                nn.init.xavier_uniform_(parameter)
            elif name.endswith("bias"):
                nn.init.zeros_(parameter)
        # Embeddings are multiplied by √d_model, so N(0, d^-1/2) gives unit-scale inputs; as tied output
        # weights they then give small initial logits.
        for module in (self.embedding, self.target_embedding):
            nn.init.normal_(module.weight, mean=0.0, std=self.config.d_model**-0.5)

    # ---- embeddings -------------------------------------------------------------------------------------
    def _check_length(self, length: int, side: str) -> None:
        if length > self.config.max_len:
            raise ValueError(f"{side} has {length} positions but this model allows at most {self.config.max_len}")

    def _embed(self, tokens: torch.Tensor, embedding: nn.Embedding, offset: int, side: str) -> torch.Tensor:
        """tokens (batch, length) -> (batch, length, d_model) = E·√d_model + PE, then dropout (Section 3.4, 5.4)."""
        length = tokens.shape[1]
        self._check_length(offset + length, side)
        x = embedding(tokens) * self.embedding_scale
        if self.config.positional == "learned":
            table = self.source_positions if side == "source" else self.target_positions
            x = x + table.weight[offset : offset + length]
        else:
            x = x + self.sinusoids[offset : offset + length]
        return self.embedding_dropout(x)

    def positional_table(self, side: str = "source") -> torch.Tensor:
        """(max_len, d_model): the positions this model adds, sinusoidal or learned."""
        if self.config.positional == "learned":
            return (self.source_positions if side == "source" else self.target_positions).weight.detach()
        return self.sinusoids

    @property
    def output_weight(self) -> torch.Tensor:
        """(target vocab, d_model): the pre-softmax projection, tied to an embedding or its own."""
        if self.config.share_embeddings:
            return self.embedding.weight
        if self.config.tie_target_output:
            return self.target_embedding.weight
        return self.output_projection.weight

    def _logits(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.config.share_embeddings:
            logits = hidden @ self.embedding.weight.t()
        elif self.config.tie_target_output:
            logits = hidden @ self.target_embedding.weight.t()
        else:
            logits = self.output_projection(hidden)
        return logits + self.logits_bias if self.config.output_bias else logits

    # ---- encoder / decoder ------------------------------------------------------------------------------
    def encode(
        self,
        src: torch.Tensor,
        *,
        need_weights: bool = False,
        inspect_layer: int | None = None,
        head_mask: HeadMask | None = None,
    ) -> EncoderOutput:
        """src (batch, src) token ids, padded with pad_id."""
        if head_mask is not None:
            head_mask.check(self.config)
        src_mask = (src != self.config.pad_id).view(src.shape[0], 1, 1, src.shape[1])
        x = self._embed(src, self.embedding, 0, "source")
        weights, internals = [], None
        for index, layer in enumerate(self.encoder_layers):
            out = layer(
                x,
                src_mask,
                need_weights=need_weights,
                inspect=index == inspect_layer,
                heads=layer_selection(head_mask, "enc", index),
            )
            x = out.hidden
            weights.append(out.self_weights)
            internals = internals or out.internals
        stacked = torch.stack(weights, dim=1) if need_weights else None
        return EncoderOutput(self.encoder_norm(x), src_mask, stacked, internals)

    def decode(
        self,
        tgt_in: torch.Tensor,
        encoded: EncoderOutput,
        *,
        need_weights: bool = False,
        inspect: tuple[str, int] | None = None,
        head_mask: HeadMask | None = None,
    ) -> ModelOutput:
        """Teacher-forced decoding of the whole target prefix. tgt_in (batch, tgt) starts with BOS."""
        y, attention, internals = self._decoder_stack(tgt_in, encoded, need_weights, inspect, head_mask)
        return ModelOutput(self._logits(self.decoder_norm(y)), attention, internals)

    def attention_maps(
        self, src: torch.Tensor, tgt_in: torch.Tensor, *, head_mask: HeadMask | None = None
    ) -> AttentionMaps:
        """src (batch, src), tgt_in (batch, tgt) -> every attention weight of `forward(need_weights=True)`, without
        the output projection no map reads (an imported model's 58,101-piece vocabulary: 30 M products a row)."""
        encoded = self.encode(src, need_weights=True, head_mask=head_mask)
        attention = self._decoder_stack(tgt_in, encoded, True, None, head_mask)[1]
        assert attention is not None
        return attention

    def _decoder_stack(
        self,
        tgt_in: torch.Tensor,
        encoded: EncoderOutput,
        need_weights: bool,
        inspect: tuple[str, int] | None,
        head_mask: HeadMask | None,
    ) -> tuple[torch.Tensor, AttentionMaps | None, AttentionInternals | None]:
        """The decoder layers over tgt_in (batch, tgt): (last layer's output (batch, tgt, d_model), the maps when
        `need_weights`, the inspected module's internals)."""
        if head_mask is not None:
            head_mask.check(self.config)
        y = self._embed(tgt_in, self.target_embedding, 0, "target")
        self_mask = causal_mask(tgt_in.shape[1], tgt_in.device)
        self_weights, cross_weights, internals = [], [], None
        for index, layer in enumerate(self.decoder_layers):
            family = inspect[0] if inspect is not None and inspect[1] == index else None
            out = layer(
                y,
                encoded.memory,
                self_mask,
                encoded.src_mask,
                need_weights=need_weights,
                inspect=family,
                heads=decoder_heads(head_mask, index),
            )
            y = out.hidden
            self_weights.append(out.self_weights)
            cross_weights.append(out.cross_weights)
            internals = internals or out.internals
        attention = None
        if need_weights:
            assert encoded.self_weights is not None, "encoder weights missing: encode with need_weights=True"
            attention = AttentionMaps(encoded.self_weights, torch.stack(self_weights, 1), torch.stack(cross_weights, 1))
        return y, attention, internals or encoded.internals

    def forward(
        self,
        src: torch.Tensor,
        tgt_in: torch.Tensor,
        *,
        need_weights: bool = False,
        inspect: tuple[str, int] | None = None,
        head_mask: HeadMask | None = None,
    ) -> ModelOutput:
        """src (batch, src), tgt_in (batch, tgt) -> logits (batch, tgt, vocab).

        inspect=(family, layer) also returns every intermediate of that one attention module
        (family in FAMILIES, layer 0-based). head_mask switches heads off for this call.
        """
        if inspect is not None and inspect[0] not in FAMILIES:
            raise ValueError(f"inspect family must be one of {FAMILIES}, got {inspect[0]!r}")
        encoder_layer = inspect[1] if inspect is not None and inspect[0] == "encoder_self" else None
        encoded = self.encode(src, need_weights=need_weights, inspect_layer=encoder_layer, head_mask=head_mask)
        decoder_inspect = inspect if inspect is not None and inspect[0] != "encoder_self" else None
        return self.decode(tgt_in, encoded, need_weights=need_weights, inspect=decoder_inspect, head_mask=head_mask)

    # ---- incremental decoding ----------------------------------------------------------------------------
    def start_decoding(self, encoded: EncoderOutput) -> DecoderCache:
        """Project the encoder memory once per decoder layer; the self-attention caches start empty."""
        cross = tuple(layer.cross_attention.project_key_value(encoded.memory) for layer in self.decoder_layers)
        return DecoderCache(tuple(None for _ in self.decoder_layers), cross, encoded.src_mask, 0)

    def decode_step(
        self, tokens: torch.Tensor, cache: DecoderCache, *, head_mask: HeadMask | None = None
    ) -> tuple[torch.Tensor, DecoderCache]:
        """tokens (rows,) = the last generated token of each row -> (log-probs (rows, vocab), grown cache).

        head_mask must be the one the cache's encoder memory was computed with (`encode(head_mask=...)`);
        masking gates head outputs only, so the cached keys/values stay valid.
        """
        y = self._embed(tokens.view(-1, 1), self.target_embedding, cache.position, "target")
        new_self = []
        for index, (layer, past, cross) in enumerate(
            zip(self.decoder_layers, cache.self_kv, cache.cross_kv, strict=True)
        ):
            out = layer(
                y, None, None, cache.src_mask, past_self=past, cross_kv=cross, heads=decoder_heads(head_mask, index)
            )
            y = out.hidden
            new_self.append(out.self_kv)
        logits = self._logits(self.decoder_norm(y[:, -1]))
        grown = DecoderCache(tuple(new_self), cache.cross_kv, cache.src_mask, cache.position + 1)
        return torch.log_softmax(logits.float(), dim=-1), grown
