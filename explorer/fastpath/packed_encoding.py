"""The encoder for decoding, on the same packed weights as the decoder: `Transformer.encode` without weights.

A search encodes its sentences once, then decodes; the encoder's linears were a fifth of a greedy batch's
time on MKL (`python -m benchmarks.probes.profile_search --ops`), so they take the same packed weights and kernels as
the decoder's steps (`linear_kernels.py`: MKL or oneDNN, whichever measured faster). W^Q, W^K, W^V are one
matrix, ReLU is fused, and a head mask gates the same heads as `Transformer.encode` does. The memory equals
`encode`'s to float32 rounding; the search's outputs are held to the old ones by
tests/fastpath/test_search_identical.py. Attention weights, internals and training (dropout) stay on
`Transformer.encode`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from explorer.fastpath.linear_kernels import Linear
from explorer.fastpath.packing import (
    FeedForward,
    Norm,
    PackedStack,
    cached,
    layer_norm,
    pack_norm,
    residual,
)
from explorer.model.head_mask import HeadMask, layer_selection
from explorer.model.transformer import EncoderOutput, Transformer


@dataclass(frozen=True)
class _Layer:
    qkv: Linear  # W^Q, W^K, W^V as one (3·d, d) linear
    out: Linear
    ffn: FeedForward  # Eq. 2, float or int8
    norms: tuple[Norm, Norm]  # attention, feed-forward


class PackedEncoder(PackedStack):
    """`Transformer.encode(src, head_mask=...)` of one model (post- or pre-LN, d_k == d_v) over packed weights."""

    def __init__(self, model: Transformer) -> None:
        super().__init__(model, model.encoder_layers[0].self_attention)
        self.layers = tuple(
            _Layer(
                self.pack_qkv(layer.self_attention),
                self.pack_linear(layer.self_attention.w_o),
                self.pack_feed_forward(layer.feed_forward),
                (pack_norm(layer.attention_residual.norm), pack_norm(layer.ffn_residual.norm)),
            )
            for layer in model.encoder_layers
        )
        final = model.encoder_norm
        self.final_norm = pack_norm(final) if isinstance(final, torch.nn.LayerNorm) else None
        # E and PE as `Transformer._embed` adds them, without its module calls and two temporaries (dropout is
        # off in evaluation): the same products and sums, in place.
        self.embedding, self.scale = model.embedding.weight.detach(), model.embedding_scale
        self.positions = model.positional_table("source").detach()

    def encode(self, src: torch.Tensor, head_mask: HeadMask | None = None) -> EncoderOutput:
        """src (batch, src) token ids padded with pad_id -> memory (batch, src, d_model), as `Transformer.encode`."""
        model = self.live_model()
        assert not model.training, "the packed encoder has no dropout: training encodes with Transformer.encode"
        if head_mask is not None:
            head_mask.check(model.config)
        batch, length = src.shape
        heads, d_k, pre_norm, linear = self.heads, self.d_k, self.pre_norm, self.kernels.apply
        model._check_length(length, "source")
        keep = src != model.config.pad_id
        mask = keep.view(batch, 1, 1, length)
        # No padding (one sentence, or sentences of one length): attention without a mask, the same weights to
        # the bit (a mask of zeros adds nothing), and 9 µs a layer less than SDPA's converting the boolean mask.
        attention_mask = None if bool(keep.all()) else mask
        x = F.embedding(src, self.embedding).mul_(self.scale).add_(self.positions[:length]).view(batch * length, -1)
        for index, layer in enumerate(self.layers):
            norm_attention, norm_ffn = layer.norms
            h = layer_norm(x, norm_attention) if pre_norm else x
            q, k, v = linear(h, layer.qkv, False).view(batch, length, 3, heads, d_k).permute(2, 0, 3, 1, 4)
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)  # (batch, heads, src, d_k)
            selection = layer_selection(head_mask, "enc", index)
            if selection is not None:
                attended = selection.apply(attended)  # Concat(ξ_1 head_1, …) before W^O
            out = linear(attended.transpose(1, 2).reshape(batch * length, heads * d_k), layer.out, False)
            x = residual(x, out, norm_attention, pre_norm)
            h = layer_norm(x, norm_ffn) if pre_norm else x
            out = layer.ffn(h)
            x = residual(x, out, norm_ffn, pre_norm)
        if self.final_norm is not None:
            x = layer_norm(x, self.final_norm)
        return EncoderOutput(x.view(batch, length, -1), mask, None, None)


_PACKED: weakref.WeakKeyDictionary[Transformer, tuple[tuple[int, ...], PackedEncoder]] = weakref.WeakKeyDictionary()


def packed_encoder(model: Transformer, versions: tuple[int, ...] | None = None) -> PackedEncoder:
    """The packed encoder of `model`, built once and rebuilt after any weight changed in place (`versions`:
    `weight_versions(model)` where the caller has read them already)."""
    return cached(_PACKED, model, PackedEncoder, versions)
