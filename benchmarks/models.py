"""The reference model (PyTorch's own `nn.Transformer` dressed like explorer's) and analytic FLOP counts."""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from torch import nn

from explorer.config import ModelConfig
from explorer.model import Transformer
from explorer.model.positional import sinusoidal_encoding


class TorchTransformer(nn.Module):
    """`torch.nn.Transformer` with explorer's embeddings and output layer, for a like-for-like comparison.

    Same config (d_model, heads, d_ff, layers, dropout, post-LN, ReLU), one shared embedding scaled by √d plus
    sinusoidal positions, and the output projection tied to that embedding. nn.Transformer always appends a
    final LayerNorm to the encoder and the decoder; post-LN (the paper, and explorer) has none, so those are
    removed. Padded source keys are masked; target padding needs no mask under the causal mask.
    """

    sinusoids: torch.Tensor  # (max_len, d_model), a buffer

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        default_heads = (None, config.d_model // config.n_heads)
        if (
            not config.share_embeddings
            or config.positional != "sinusoidal"
            or config.d_k not in default_heads
            or config.d_v not in default_heads
        ):
            raise ValueError("the reference model covers shared embeddings, sinusoidal positions and d_k = d/h")
        self.config = config
        d = config.d_model
        self.embedding = nn.Embedding(config.vocab_size, d)
        self.register_buffer("sinusoids", sinusoidal_encoding(config.max_len, d), persistent=False)
        self.embedding_dropout = nn.Dropout(config.dropout)
        pre = config.norm_position == "pre"
        with warnings.catch_warnings():  # "enable_nested_tensor is True, but ... norm_first": inference-only
            warnings.simplefilter("ignore")
            self.transformer = nn.Transformer(
                d_model=d,
                nhead=config.n_heads,
                num_encoder_layers=config.n_encoder_layers,
                num_decoder_layers=config.n_decoder_layers,
                dim_feedforward=config.d_ff,
                dropout=config.dropout,
                activation="relu",
                batch_first=True,
                norm_first=pre,
            )
        # Training is what is compared; the nested-tensor inference path would only add a warning.
        self.transformer.encoder.enable_nested_tensor = self.transformer.encoder.use_nested_tensor = False
        if not pre:
            self.transformer.encoder.norm = None
            self.transformer.decoder.norm = None
        nn.init.normal_(self.embedding.weight, mean=0.0, std=d**-0.5)
        self.scale = math.sqrt(d)

    def _embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.embedding_dropout(self.embedding(tokens) * self.scale + self.sinusoids[: tokens.shape[1]])

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """src (batch, src), tgt_in (batch, tgt) -> logits (batch, tgt, vocab)."""
        src_padding = src == self.config.pad_id
        length = tgt_in.shape[1]
        causal = nn.Transformer.generate_square_subsequent_mask(length, device=tgt_in.device)
        hidden = self.transformer(
            self._embed(src),
            self._embed(tgt_in),
            tgt_mask=causal,
            src_key_padding_mask=src_padding,
            memory_key_padding_mask=src_padding,
            tgt_is_causal=True,
        )
        return hidden @ self.embedding.weight.t()


@torch.no_grad()
def copy_weights(source: Transformer, target: TorchTransformer) -> None:
    """Load explorer's weights into the reference model (packing W_Q, W_K, W_V into in_proj), so both compute
    the same function; used to check that the comparison is like for like."""
    target.embedding.weight.copy_(source.embedding.weight)

    # Submodules reached by attribute are typed `Tensor | Module` by torch: these copy by name.
    def attention(ours: Any, theirs: Any) -> None:
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)

    def norm(ours: Any, theirs: Any) -> None:
        theirs.weight.copy_(ours.weight)
        theirs.bias.copy_(ours.bias)

    def ffn(ours: Any, theirs: Any) -> None:
        theirs.linear1.weight.copy_(ours.w_1.weight)
        theirs.linear1.bias.copy_(ours.w_1.bias)
        theirs.linear2.weight.copy_(ours.w_2.weight)
        theirs.linear2.bias.copy_(ours.w_2.bias)

    for ours, theirs in zip(source.encoder_layers, target.transformer.encoder.layers, strict=False):
        attention(ours.self_attention, theirs.self_attn)
        ffn(ours.feed_forward, theirs)
        norm(ours.attention_residual.norm, theirs.norm1)
        norm(ours.ffn_residual.norm, theirs.norm2)
    for mine, reference in zip(source.decoder_layers, target.transformer.decoder.layers, strict=False):
        attention(mine.self_attention, reference.self_attn)
        attention(mine.cross_attention, reference.multihead_attn)
        ffn(mine.feed_forward, reference)
        norm(mine.self_residual.norm, reference.norm1)
        norm(mine.cross_residual.norm, reference.norm2)
        norm(mine.ffn_residual.norm, reference.norm3)
    if source.config.norm_position == "pre":
        norm(source.encoder_norm, target.transformer.encoder.norm)
        norm(source.decoder_norm, target.transformer.decoder.norm)


def forward_flops(config: ModelConfig, batch: int, src_len: int, tgt_len: int) -> float:
    """Matmul FLOPs of one forward pass over padded (batch, src_len) / (batch, tgt_len) tensors.

    Counted: Q/K/V/O projections, QKᵀ and AV of every attention (full square, as the kernels compute it),
    both FFN matmuls, the output projection; 2 FLOPs per multiply-add. Not counted: softmax, norms,
    embeddings, the loss (elementwise work, small next to the matmuls).
    """
    d, ff, vocab = config.d_model, config.d_ff, config.vocab_size
    hk, hv = config.n_heads * config.head_dim_k, config.n_heads * config.head_dim_v
    S, T = batch * src_len, batch * tgt_len  # query/key rows

    def attention(queries: int, q_len: int, k_len: int, key_rows: int) -> float:
        projections = 2 * queries * d * hk + 2 * key_rows * d * (hk + hv) + 2 * queries * hv * d
        scores = 2 * batch * q_len * k_len * hk + 2 * batch * q_len * k_len * hv
        return projections + scores

    ffn = lambda rows: 4 * rows * d * ff  # noqa: E731
    encoder = config.n_encoder_layers * (attention(S, src_len, src_len, S) + ffn(S))
    decoder = config.n_decoder_layers * (attention(T, tgt_len, tgt_len, T) + attention(T, tgt_len, src_len, S) + ffn(T))
    output = 2 * T * d * vocab
    return float(encoder + decoder + output)


def training_flops(config: ModelConfig, batch: int, src_len: int, tgt_len: int) -> float:
    """Forward + backward ≈ 3 × forward (the backward pass does two matmuls per forward matmul)."""
    return 3.0 * forward_flops(config, batch, src_len, tgt_len)
