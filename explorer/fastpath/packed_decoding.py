"""Incremental decoding with packed weights: the same function as `Transformer.decode_step`, fewer operations.

One decoder step of a small model on a CPU costs more in per-operation overhead than in arithmetic, so this
path does the step's work in fewer, larger operations:
- the self-attention's W^Q, W^K, W^V are one (3·d, d) matrix (one matmul instead of three);
- the cross-attention keys/values of every layer are projected from the encoder memory by one matmul and
  kept as one tensor (layers, 2, rows, heads, src, d_k), so reordering rows for the beam is one `index_select`;
- a layer's self-attention cache holds keys and values together, (rows, 2, heads, t, d_k);
- for one or a few short sentences, the cross-attention's W^Q and W^O are multiplied out with the fixed keys
  and values once, before the first step (`folded_cross.py`): a step then reads 120 KiB a layer instead of
  512 KiB (one sentence, greedy and beam 4: 0.98x the time, `python -m benchmarks.probes.search_parts`);
- no per-step dataclasses, closures or module calls: the weights are read once, when the packed decoder is
  built from the model (`packed_decoder`), and rebuilt when a weight has changed since (training in place);
- few small operations a step, as each costs about a microsecond where a one-row product costs 10-25: the
  self-attention buffer's per-layer views are made once a step (six view operations a step and one a layer,
  instead of seven a layer), one
  query's heads are concatenated by a view, and a post-LN residual is summed in place into the sub-layer's
  output (greedy and beam 4 on one sentence: 1.045x each, in one process alternating with the step before,
  6 rounds, outputs and log-probabilities identical);
- the linears (and the tied output projection) run on the kernels measured fastest on this machine, MKL's
  `addmm` on an (in, out) copy or oneDNN with weights prepacked once and ReLU fused into the first
  feed-forward linear (`linear_kernels.py` says why: a step is bound by reading weights, and which library
  reads them faster depends on the CPU);
- where the model allows (float32, post-LN, on the CPU; MKL or oneDNN) and no decoder head is masked, the step's
  operations, and one sentence's whole greedy search (`greedy_one`) or beam search (`beam_one`), run in one
  TorchScript call (`scripted_decoding.py`): the same ATen calls without Python between them, the same values
  to the bit;
- an imported Marian model's switches are computed here too (its feed-forward activation between the two
  products, its logits bias added by the output product; the scorer bans `<pad>` after the softmax, as the
  reference path does), and the scripted functions, which know only ReLU and bare logits, decline them. At
  opus-mt-en-de's size a step reads about 200 MiB of weights, so the (in, out) copies MKL reads faster and the
  folded cross-attention matter more than the Python saved: one sentence's greedy search 1.35x, in CPU time.

Same arithmetic (the fused attention kernel, LayerNorm, the same linears), so the log-probabilities equal
`decode_step`'s to float32 rounding (either kernel may sum in another order than F.linear does);
`tests/fastpath/test_search_identical.py` holds the search's outputs to the old ones on 200 test2016 sentences.
A head mask (`HeadMask`, Michel et al. 2019) is an argument of `step`,
as of `decode_step`: the switched-off heads' outputs are gated before W^O by the same `HeadSelection.apply`,
so a masked re-decode takes this path too, with the general path's outputs for the same mask. The explicit path
with attention weights stays in `transformer.py`: this one is only for decoding without them.
"""

from __future__ import annotations

import functools
import math
import weakref

import torch
import torch.nn.functional as F

from explorer.fastpath import scripted_decoding
from explorer.fastpath.folded_cross import cross_weights, fold_cross, worth_folding
from explorer.fastpath.linear_kernels import Linear
from explorer.fastpath.packed_cache import PackedCache
from explorer.fastpath.packing import (
    DecoderLayer,
    PackedStack,
    cached,
    layer_norm,
    pack_norm,
    packable,
    residual,
)
from explorer.fastpath.scripted_decoding import FIRST_CAPACITY, LayerWeights, layer_weights
from explorer.model.head_mask import HeadMask, HeadSelection
from explorer.model.transformer import EncoderOutput, Transformer


class PackedDecoder(PackedStack):
    """Decoding steps of one `Transformer` (post- or pre-LN, d_k == d_v) over packed weights."""

    def __init__(self, model: Transformer) -> None:
        super().__init__(model, model.decoder_layers[0].self_attention)
        config, kernels = model.config, self.kernels
        self.layers = tuple(
            DecoderLayer(
                self.pack_qkv(layer.self_attention),
                self.pack_linear(layer.self_attention.w_o),
                self.pack_linear(layer.cross_attention.w_q),
                self.pack_linear(layer.cross_attention.w_o),
                self.pack_feed_forward(layer.feed_forward),
                tuple(pack_norm(r.norm) for r in (layer.self_residual, layer.cross_residual, layer.ffn_residual)),
            )
            for layer in model.decoder_layers
        )
        cross = [layer.cross_attention for layer in model.decoder_layers]
        kv_weights: list[torch.Tensor] = [w for c in cross for w in (c.w_k.weight, c.w_v.weight)]
        kv_biases: list[torch.Tensor] = [b for c in cross for b in (c.w_k.bias, c.w_v.bias)]
        self.ungated: _Gates = ((None, None),) * len(self.layers)  # what a step without a head mask gates: nothing
        self.cross_kv = (torch.cat(kv_weights).detach(), torch.cat(kv_biases).detach())  # (layers·2·d, d)
        self.cross_fold = cross_weights(cross)
        final = model.decoder_norm
        self.final_norm = pack_norm(final) if self.pre_norm and isinstance(final, torch.nn.LayerNorm) else None
        # E·√d_model once, not at every step: the same products, one operation fewer a step.
        self.scaled_embedding = model.target_embedding.weight.detach() * model.embedding_scale
        # PE as a table (the scripted greedy loop indexes it) and by row: a step takes its row by a tuple index,
        # not a tensor operation.
        self.positions = model.positional_table("target").detach()
        self.position_rows = self.positions.unbind(0)
        self.max_len = config.max_len
        # (vocab, d) -> logits, tied or not, with an imported model's logits bias (Marian's final_logits_bias).
        bias = model.logits_bias.detach() if config.output_bias else None
        self.output: Linear = (kernels.pack(model.output_weight), bias)
        # Only the paper's ReLU, bare logits and a search free to produce every token script (module doc).
        self.scriptable = config.activation == "relu" and not config.output_bias and not config.ban_pad

    @functools.cached_property
    def scripted_weights(self) -> LayerWeights | None:
        """This decoder's weights in the order the scripted step and greedy loop read them, or None where they do
        not apply (`scripted_decoding.layer_weights`, and an imported model's switches: `scriptable`); read once
        per packed decoder, rebuilt after training."""
        return layer_weights(self.layers, self.kernels, self.pre_norm) if self.scriptable else None

    def _gates_a_decoder_head(self, head_mask: HeadMask | None) -> bool:
        """Whether `head_mask` switches off a head of a decoder step (self or cross); an encoder head's gate acted
        in `encode`, so the steps, and the one-call searches, are the unmasked ones."""
        return head_mask is not None and any(
            gate is not None for pair in _gates(head_mask, len(self.layers)) for gate in pair
        )

    def greedy_one(
        self, cache: PackedCache, bos: int, eos: int, max_len: int, *, head_mask: HeadMask | None = None
    ) -> tuple[list[int], list[float], PackedCache] | None:
        """Greedy search of one sentence from `start`'s cache in one TorchScript call (`scripted_decoding.py`):
        (tokens, their log-probabilities, the cache as the steps would have left it), or None where the search
        must step in Python (the same outputs). A head mask that gates no decoder head (only encoder heads, which
        acted in `encode`) leaves the steps as they are; one that gates a decoder head needs the Python step."""
        if self._gates_a_decoder_head(head_mask):
            return None
        found = scripted_decoding.greedy(self, cache, bos, eos, max_len)
        if found is None:
            return None
        tokens, log_probs, buffer = found
        return tokens, log_probs, PackedCache(buffer, cache.cross_kv, cache.src_mask, len(tokens), 1, cache.folded)

    def beam_one(
        self, cache: PackedCache, bos: int, eos: int, max_len: int, beam_size: int, *, head_mask: HeadMask | None = None
    ) -> list[tuple[list[int], list[float], float, bool]] | None:
        """Beam search of one sentence from `start`'s cache in one TorchScript call (`scripted_decoding.beam`):
        every ended hypothesis as (tokens, token log-probabilities, total, finished), or None where the search
        must step in Python (the same outputs). Head masks as `greedy_one`; the cache is only read."""
        if self._gates_a_decoder_head(head_mask):
            return None
        return scripted_decoding.beam(self, cache, bos, eos, max_len, beam_size)

    def start(self, encoded: EncoderOutput) -> PackedCache:
        """Project the memory (batch, src, d_model) for every layer's cross-attention at once."""
        memory = encoded.memory
        batch, src, _ = memory.shape
        projected = F.linear(memory, *self.cross_kv)  # (batch, src, layers·2·heads·d_k)
        cross = projected.reshape(batch, src, len(self.layers), 2, self.heads, self.d_k).permute(2, 3, 0, 4, 1, 5)
        # The additive mask SDPA makes of a boolean one on every call, made once (one operation, not three).
        mask = torch.where(encoded.src_mask, 0.0, -math.inf).to(memory.dtype)
        cross = cross.contiguous()
        folded = None
        if worth_folding(batch, self.heads, src, memory.shape[-1]):
            folded = fold_cross(cross, mask, self.cross_fold)
        return PackedCache(None, cross, mask, 0, 1, folded)

    def step(
        self, tokens: torch.Tensor, cache: PackedCache, *, head_mask: HeadMask | None = None
    ) -> tuple[torch.Tensor, PackedCache]:
        """tokens (rows,) -> (log-probabilities (rows, vocab), grown cache), as `Transformer.decode_step`.

        head_mask must be the one the cache's encoder memory was encoded with (`encode(head_mask=...)`);
        only its `dec` and `cross` gates act here. None, or a mask with every decoder head kept, runs exactly
        the unmasked operations.
        """
        position = cache.position
        if position >= self.max_len:
            self.live_model()._check_length(position + 1, "target")
        rows, heads, d_k = tokens.shape[0], self.heads, self.d_k
        width, size, pre_norm = heads * d_k, cache.group_size, self.pre_norm
        groups = rows // size
        buffer = cache.self_kv
        if buffer is None or position == buffer.shape[0]:  # no room for this position: double the buffer
            capacity = max(FIRST_CAPACITY, 2 * position)
            grown = self.scaled_embedding.new_empty((capacity, len(self.layers), rows, 2, heads, d_k))
            if buffer is not None:
                grown[:position].copy_(buffer)
            buffer = grown
        length = position + 1
        cross_kv, src_mask, folded = cache.cross_kv, cache.src_mask, cache.folded
        gates = self.ungated if head_mask is None else _gates(head_mask, len(self.layers))
        if gates is self.ungated or not any(gate is not None for pair in gates for gate in pair):
            # The same operations in one TorchScript call where it applies (`scripted_decoding.py`: 0.96-0.99x
            # the time of beam 4 on one sentence and of batches of 32, outputs identical to the bit).
            scripted = scripted_decoding.step(self, tokens, cache, buffer)
            if scripted is not None:
                return scripted, PackedCache(buffer, cross_kv, src_mask, length, size, folded)
        y = F.embedding(tokens, self.scaled_embedding)
        y += self.position_rows[position]  # (rows, d)
        linear = self.kernels.apply
        # Every layer's views of the buffer at once, six operations a step instead of seven a layer: where this
        # step's keys/values go, (rows, 2, heads, 1, d_k) per layer, and all of them so far, (rows, 2, heads,
        # length, d_k) per layer. A step of one sentence costs more in small operations than in arithmetic.
        slabs = buffer[position].unsqueeze(4).unbind(0)
        pasts = buffer[:length].permute(1, 2, 3, 4, 0, 5).unbind(0)
        for index, (layer, (self_gate, cross_gate)) in enumerate(zip(self.layers, gates, strict=True)):
            norm_self, norm_cross, norm_ffn = layer.norms
            h = layer_norm(y, norm_self) if pre_norm else y
            qkv = linear(h, layer.qkv, False).view(rows, 3, heads, 1, d_k)
            slabs[index].copy_(qkv[:, 1:])
            keys, values = pasts[index].unbind(1)
            attended = F.scaled_dot_product_attention(qkv[:, 0], keys, values)  # (rows, heads, 1, d_k)
            if self_gate is not None:
                attended = self_gate.apply(attended)  # Concat(ξ_1 head_1, …) before W^O
            # One query a row: (rows, heads, 1, d_k) is already Concat(head_1, …, head_h) row by row.
            y = residual(y, linear(attended.reshape(rows, width), layer.self_out, False), norm_self, pre_norm)
            h = layer_norm(y, norm_cross) if pre_norm else y
            if folded is not None and cross_gate is None:
                out = folded.attend(index, h, heads)
            else:
                # The rows of a group (a sentence's beam) are the queries of one attention over its memory.
                q = linear(h, layer.cross_q, False).view(groups, size, heads, d_k).transpose(1, 2)
                kv = cross_kv[index]
                attended = F.scaled_dot_product_attention(q, kv[0], kv[1], attn_mask=src_mask)
                if cross_gate is not None:
                    attended = cross_gate.apply(attended)  # (groups, heads, size, d_k): a head is dim 1 still
                out = linear(attended.transpose(1, 2).reshape(rows, width), layer.cross_out, False)
            y = residual(y, out, norm_cross, pre_norm)
            y = residual(y, layer.ffn(layer_norm(y, norm_ffn) if pre_norm else y), norm_ffn, pre_norm)
        if self.final_norm is not None:
            y = layer_norm(y, self.final_norm)
        logits = linear(y, self.output, False)  # (rows, vocab), a tensor of its own
        next_cache = PackedCache(buffer, cross_kv, src_mask, length, size, folded)
        if logits.dtype == torch.float32 and logits.device.type == "cpu":
            # In place: the CPU kernel reads a row whole (maximum, then the sum of exponentials) before it writes
            # it, so the result is the same to the bit, and the step allocates and writes one (rows, vocab)
            # tensor instead of two: 5 MiB for beam 4 over 32 sentences, 1.04x for that cell (in one process,
            # alternating, 6 rounds; the search's outputs identical).
            return torch.log_softmax(logits, dim=-1, out=logits), next_cache
        return torch.log_softmax(logits.float(), dim=-1), next_cache


_Gates = tuple[tuple[HeadSelection | None, HeadSelection | None], ...]


def _gates(mask: HeadMask, layers: int) -> _Gates:
    """Per decoder layer, the (self, cross) selection; None where every head of that module is kept."""
    return tuple((mask.layer("dec", index), mask.layer("cross", index)) for index in range(layers))


_PACKED: weakref.WeakKeyDictionary[Transformer, tuple[tuple[int, ...], PackedDecoder]] = weakref.WeakKeyDictionary()


_SUPPORTED: weakref.WeakKeyDictionary[Transformer, bool] = weakref.WeakKeyDictionary()


def supports_packed(model: Transformer) -> bool:
    """Packed encoding and decoding need float nn.Linear weights, except feed-forward blocks in int8 as
    `explorer.quantize` makes them, and keys and values of one width. Answered once per model: walking its
    modules took 71 µs of every translated sentence, and a model's modules are not swapped after it is built
    (`quantize_int8` quantizes a copy)."""
    known = _SUPPORTED.get(model)
    if known is None:
        attention = model.decoder_layers[0].self_attention
        known = _SUPPORTED[model] = packable(model) and attention.d_k == attention.d_v
    return known


def packed_decoder(model: Transformer, versions: tuple[int, ...] | None = None) -> PackedDecoder:
    """The packed decoder of `model`, built once and rebuilt after any weight changed in place (`versions`:
    `weight_versions(model)` where the caller has read them already)."""
    return cached(_PACKED, model, PackedDecoder, versions)
