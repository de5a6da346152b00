"""Incremental decoding with packed weights: the same function as `Transformer.decode_step`, fewer operations.

One decoder step of a small model on a CPU costs more in per-operation overhead than in arithmetic, so this
path does the step's work in fewer, larger operations:
- the self-attention's W^Q, W^K, W^V are one (3·d, d) matrix (one matmul instead of three);
- the cross-attention keys/values of every layer are projected from the encoder memory by one matmul and
  kept as one tensor (layers, 2, rows, heads, src, d_k), so reordering rows for the beam is one `index_select`;
- a layer's self-attention cache holds keys and values together, (rows, 2, heads, t, d_k);
- no per-step dataclasses, closures or module calls: the weights are read once, when the packed decoder is
  built from the model (`packed_decoder`), and rebuilt when a weight has changed since (training in place).

Same arithmetic, same kernels (the fused attention kernel, LayerNorm, the tied output projection), so the
outputs equal `decode_step`'s; `tests/test_perf_search_identical.py` holds the search's outputs to the
old ones on 200 test2016 sentences. The explicit path with attention weights and head masks stays in
`transformer.py`: this one is only for decoding without them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from explorer.model.transformer import EncoderOutput, Transformer


@dataclass(frozen=True)
class PackedCache:
    """What packed decoding carries between steps; reorderable by row like `DecoderCache`.

    self_kv[l]: (rows, 2, heads, t, d_k), keys then values of the t generated positions of layer l.
    cross_kv: (layers, 2, rows, heads, src, d_k), the encoder memory projected once.
    """

    self_kv: tuple[torch.Tensor, ...]
    cross_kv: torch.Tensor
    src_mask: torch.Tensor  # (rows, 1, 1, src) bool, True on real tokens
    position: int  # index of the next target position

    def select(self, rows: torch.Tensor) -> PackedCache:
        return PackedCache(tuple(kv.index_select(0, rows) for kv in self.self_kv),
                           self.cross_kv.index_select(2, rows), self.src_mask.index_select(0, rows), self.position)


@dataclass(frozen=True)
class _Layer:
    qkv: tuple[torch.Tensor, torch.Tensor]  # (3·d, d), (3·d,)
    self_out: tuple[torch.Tensor, torch.Tensor]
    cross_q: tuple[torch.Tensor, torch.Tensor]
    cross_out: tuple[torch.Tensor, torch.Tensor]
    ff1: tuple[torch.Tensor, torch.Tensor]
    ff2: tuple[torch.Tensor, torch.Tensor]
    norms: tuple[tuple[torch.Tensor, torch.Tensor, float], ...]  # self, cross, ffn: (weight, bias, eps)


class PackedDecoder:
    """Decoding steps of one `Transformer` (post- or pre-LN, d_k == d_v) over packed weights."""

    def __init__(self, model: Transformer) -> None:
        config = model.config
        self.model_ref = weakref.ref(model)
        self.heads, self.d_k = config.n_heads, model.decoder_layers[0].self_attention.d_k
        self.pre_norm = config.norm_position == "pre"
        self.versions = _versions(model)

        def pair(linear: torch.nn.Linear) -> tuple[torch.Tensor, torch.Tensor]:
            return linear.weight.detach(), linear.bias.detach()

        def norm(module: torch.nn.LayerNorm) -> tuple[torch.Tensor, torch.Tensor, float]:
            return module.weight.detach(), module.bias.detach(), module.eps

        layers = []
        kv_weights, kv_biases = [], []
        for layer in model.decoder_layers:
            s, c = layer.self_attention, layer.cross_attention
            qkv = (torch.cat([s.w_q.weight, s.w_k.weight, s.w_v.weight]).detach(),
                   torch.cat([s.w_q.bias, s.w_k.bias, s.w_v.bias]).detach())
            layers.append(_Layer(qkv, pair(s.w_o), pair(c.w_q), pair(c.w_o), pair(layer.feed_forward.w_1),
                                 pair(layer.feed_forward.w_2),
                                 (norm(layer.self_residual.norm), norm(layer.cross_residual.norm),
                                  norm(layer.ffn_residual.norm))))
            kv_weights += [c.w_k.weight, c.w_v.weight]
            kv_biases += [c.w_k.bias, c.w_v.bias]
        self.layers = tuple(layers)
        self.cross_kv = (torch.cat(kv_weights).detach(), torch.cat(kv_biases).detach())  # (layers·2·d, d)
        self.final_norm = norm(model.decoder_norm) if self.pre_norm else None

    def start(self, encoded: EncoderOutput) -> PackedCache:
        """Project the memory (batch, src, d_model) for every layer's cross-attention at once."""
        memory = encoded.memory
        batch, src, _ = memory.shape
        projected = F.linear(memory, *self.cross_kv)  # (batch, src, layers·2·heads·d_k)
        cross = projected.reshape(batch, src, len(self.layers), 2, self.heads, self.d_k).permute(2, 3, 0, 4, 1, 5)
        return PackedCache((), cross.contiguous(), encoded.src_mask, 0)

    def step(self, tokens: torch.Tensor, cache: PackedCache) -> tuple[torch.Tensor, PackedCache]:
        """tokens (rows,) -> (log-probabilities (rows, vocab), grown cache), as `Transformer.decode_step`."""
        model = self.model_ref()
        assert model is not None, "the model of this packed decoder is gone"
        model._check_length(cache.position + 1, "target")
        rows, heads, d_k = tokens.shape[0], self.heads, self.d_k
        width = heads * d_k
        y = model.target_embedding(tokens.view(-1, 1)) * model.embedding_scale
        y = y + model.positional_table("target")[cache.position:cache.position + 1]  # (rows, 1, d)
        grown = []
        for index, layer in enumerate(self.layers):
            past = cache.self_kv[index] if cache.self_kv else None
            norm_self, norm_cross, norm_ffn = layer.norms
            h = _layer_norm(y, norm_self) if self.pre_norm else y
            qkv = F.linear(h, *layer.qkv).view(rows, 1, 3, heads, d_k)
            q = qkv[:, :, 0].transpose(1, 2)  # (rows, heads, 1, d_k)
            new = qkv[:, :, 1:].permute(0, 2, 3, 1, 4)  # (rows, 2, heads, 1, d_k)
            kv = new.contiguous() if past is None else torch.cat([past, new], dim=3)
            grown.append(kv)
            attended = F.scaled_dot_product_attention(q, kv[:, 0], kv[:, 1])
            y = self._residual(y, F.linear(attended.transpose(1, 2).reshape(rows, 1, width), *layer.self_out),
                               norm_self)
            h = _layer_norm(y, norm_cross) if self.pre_norm else y
            q = F.linear(h, *layer.cross_q).view(rows, 1, heads, d_k).transpose(1, 2)
            attended = F.scaled_dot_product_attention(q, cache.cross_kv[index, 0], cache.cross_kv[index, 1],
                                                      attn_mask=cache.src_mask)
            y = self._residual(y, F.linear(attended.transpose(1, 2).reshape(rows, 1, width), *layer.cross_out),
                               norm_cross)
            h = _layer_norm(y, norm_ffn) if self.pre_norm else y
            y = self._residual(y, F.linear(torch.relu(F.linear(h, *layer.ff1)), *layer.ff2), norm_ffn)
        if self.final_norm is not None:
            y = _layer_norm(y, self.final_norm)
        logits = model._logits(y[:, -1])
        return (torch.log_softmax(logits.float(), dim=-1),
                PackedCache(tuple(grown), cache.cross_kv, cache.src_mask, cache.position + 1))

    def _residual(self, x: torch.Tensor, sublayer_out: torch.Tensor,
                  norm: tuple[torch.Tensor, torch.Tensor, float]) -> torch.Tensor:
        """Post-LN: LayerNorm(x + sublayer); pre-LN: x + sublayer (the sublayer read the normed x)."""
        return x + sublayer_out if self.pre_norm else _layer_norm(x + sublayer_out, norm)


def _layer_norm(x: torch.Tensor, norm: tuple[torch.Tensor, torch.Tensor, float]) -> torch.Tensor:
    weight, bias, eps = norm
    return F.layer_norm(x, (weight.shape[0],), weight, bias, eps)


def _versions(model: Transformer) -> tuple[int, ...]:
    """In-place version of every weight; -1 for inference tensors (made under `inference_mode`, never trained)."""
    return tuple(-1 if p.is_inference() else p._version for p in model.parameters())


_PACKED: weakref.WeakKeyDictionary[Transformer, PackedDecoder] = weakref.WeakKeyDictionary()


def supports_packed(model: Transformer) -> bool:
    """Packed decoding needs float nn.Linear weights (not int8 modules) and keys and values of one width."""
    attention = model.decoder_layers[0].self_attention
    float_linears = all(type(m) is torch.nn.Linear for m in model.decoder_layers.modules()
                        if "Linear" in type(m).__name__)
    return float_linears and attention.d_k == attention.d_v


def packed_decoder(model: Transformer) -> PackedDecoder:
    """The packed decoder of `model`, built once and rebuilt after any weight changed in place."""
    packed = _PACKED.get(model)
    if packed is None or packed.versions != _versions(model):
        # Normal tensors even when first asked for inside `torch.inference_mode()`: the packed weights
        # outlive that call, and inference tensors could not be used in a later call outside it.
        with torch.inference_mode(False), torch.no_grad():
            packed = PackedDecoder(model)
        _PACKED[model] = packed
    return packed
