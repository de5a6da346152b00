"""Greedy decoding of one sentence as one TorchScript call: the packed decoder's steps, without Python between them.

A typed sentence decoded greedily (the Translate page, `explorer translate` one line at a time) takes a dozen or
more decoder steps of one row. Each step is about 80 small tensor operations around 13 weight products, and the
Python that calls them costs about a microsecond an operation on top of what the operation itself costs. Run
by TorchScript's interpreter, the whole search loop (steps, the maximum, the stop test) makes the same ATen
calls from C++: one sentence 0.86x the time of the Python loop, outputs and log-probabilities identical to the
bit (`python -m benchmarks.scripted_greedy`, benchmarks/RESULTS.md). A C++ extension making the same calls
measured 0.79x, but needs a compiler and 37 s of building on the user's machine; `torch.compile` was slower
than eager for this step (RESULTS.md, the fourth session).

Exactness: the function below makes the calls `PackedDecoder.step` and `search._greedy_one` make, in the same
order, on the same tensors (the fused attention kernel, `addmm` on the MKL (in, out) copies, the folded
cross-attention, LayerNorm, log-softmax, the maximum). TorchScript's graph optimizer would rewrite some of them
(it splits `addmm` into a product and an add, which rounds differently), so the function runs with it off
(`torch.jit.optimized_execution(False)`, a thread-local setting): the interpreter then runs the graph as written.

Where it applies (`applies`): a float32 post-LN model on the CPU with MKL kernels (the packed decoder's choice
on Intel CPUs), one sentence whose cross-attention is folded (up to 64 source tokens for the shipped model), no
head mask, the search's length limit within the positional table. Anything else decodes step by step in Python,
with the same outputs. `EXPLORER_SCRIPTED=0` turns it off (for measuring it against the Python loop).

TorchScript is deprecated in favour of `torch.compile`, which does not pay here; if a torch without it is
installed, `scripted_loop` returns None and every sentence takes the Python loop.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from explorer.model.linear_kernels import MKL
from explorer.model.packing import MklFeedForward

if TYPE_CHECKING:
    from explorer.model.packed_decoding import PackedCache, PackedDecoder

VARIABLE = "EXPLORER_SCRIPTED"
FIRST_CAPACITY = 16  # target positions the self-attention buffer starts with (PackedDecoder.step's too)
_PER_LAYER = 14  # tensors per decoder layer in `LayerWeights.flat`
_FOLDED = 4  # tensors per decoder layer from `FoldedCross.operands`


def greedy_loop(
    buffer: torch.Tensor,
    embedding: torch.Tensor,
    positions: torch.Tensor,
    weights: list[torch.Tensor],
    folded: list[torch.Tensor],
    output: torch.Tensor,
    eps: list[float],
    bos: int,
    eos: int,
    max_len: int,
    heads: int,
    d_k: int,
) -> tuple[list[int], list[float], torch.Tensor]:
    """Greedy search of one sentence over a post-LN packed decoder with folded cross-attention.

    buffer: (capacity, layers, 1, 2, heads, d_k), the self-attention keys/values (empty; grown when full);
    embedding: (vocab, d_model), E·√d_model; positions: (max_len, d_model), PE;
    weights: per layer W^QKV, b^QKV, W^O, b^O, W_1, b_1, W_2, b_2 ((in, out) copies) and three LayerNorms'
        weight and bias; folded: per layer `FoldedCross.operands` of one group; output: (d_model, vocab);
    eps: per layer the three LayerNorms' eps.
    -> (tokens, their log-probabilities as float32 values, the buffer with every step's keys/values).
    """
    tokens: list[int] = []
    log_probs: list[float] = []
    layers = len(weights) // 14
    width = heads * d_k
    token = bos
    for position in range(max_len):
        if position == buffer.shape[0]:  # no room for this position: double the buffer, as PackedDecoder.step
            grown = buffer.new_empty([2 * position, layers, 1, 2, heads, d_k])
            grown[:position].copy_(buffer)
            buffer = grown
        y = embedding[token].unsqueeze(0) + positions[position]  # (1, d_model): E·√d_model + PE, a new tensor
        slabs = buffer[position].unsqueeze(4).unbind(0)
        pasts = buffer[: position + 1].permute(1, 2, 3, 4, 0, 5).unbind(0)
        for index in range(layers):
            w = 14 * index
            f = 4 * index
            qkv = torch.addmm(weights[w + 1], y, weights[w]).view(1, 3, heads, 1, d_k)
            slabs[index].copy_(qkv[:, 1:])
            keys_values = pasts[index].unbind(1)
            attended = F.scaled_dot_product_attention(qkv[:, 0], keys_values[0], keys_values[1])
            out = torch.addmm(weights[w + 3], attended.reshape(1, width), weights[w + 2])
            out += y
            y = torch.layer_norm(out, [out.shape[1]], weights[w + 8], weights[w + 9], eps[3 * index])
            scores = torch.addmm(folded[f + 1], y, folded[f])
            attention = torch.softmax(scores.view(1, heads, -1), dim=-1)
            out = torch.addmm(folded[f + 3], attention.view(1, -1), folded[f + 2])
            out += y
            y = torch.layer_norm(out, [out.shape[1]], weights[w + 10], weights[w + 11], eps[3 * index + 1])
            hidden = torch.addmm(weights[w + 5], y, weights[w + 4]).relu_()
            out = torch.addmm(weights[w + 7], hidden, weights[w + 6])
            out += y
            y = torch.layer_norm(out, [out.shape[1]], weights[w + 12], weights[w + 13], eps[3 * index + 2])
        logits = torch.mm(y, output)
        best = torch.log_softmax(logits, dim=-1).max(dim=-1)
        token = int(best[1].item())
        tokens.append(token)
        log_probs.append(float(best[0].item()))
        if token == eos:
            break
    return tokens, log_probs, buffer


Loop = Callable[..., tuple[list[int], list[float], torch.Tensor]]


@functools.cache
def scripted_loop() -> Loop | None:
    """`greedy_loop` compiled by TorchScript once per process (about 20 ms), or None where it cannot be."""
    try:
        with warnings.catch_warnings():
            # torch 2.13 warns that TorchScript is deprecated; this module says why it is used (module doc).
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.script(greedy_loop)
    except Exception:  # noqa: BLE001 - any failure to compile means the Python loop, which gives the same outputs
        return None


@dataclass(frozen=True)
class LayerWeights:
    """A packed decoder's tensors in the order `greedy_loop` reads them, or why it cannot read them."""

    flat: list[torch.Tensor]
    eps: list[float]


def layer_weights(decoder: PackedDecoder) -> LayerWeights | None:
    """The decoder's weights for `greedy_loop`; None for what it does not implement (module doc)."""
    if decoder.kernels is not MKL or decoder.pre_norm or decoder.final_norm is not None:
        return None
    flat: list[torch.Tensor] = []
    eps: list[float] = []
    for layer in decoder.layers:
        ffn = layer.ffn
        linears = (layer.qkv, layer.self_out)
        if not isinstance(ffn, MklFeedForward) or any(bias is None for _, bias in linears):
            return None
        for weight, bias in linears:
            assert bias is not None
            flat += [weight, bias]
        flat += [ffn.in_1, ffn.b_1, ffn.in_2, ffn.b_2]
        for norm_weight, norm_bias, norm_eps in layer.norms:
            flat += [norm_weight, norm_bias]
            eps.append(norm_eps)
    if any(t.device.type != "cpu" or t.dtype != torch.float32 for t in flat):
        return None
    return LayerWeights(flat, eps)


def enabled() -> bool:
    return os.environ.get(VARIABLE, "1") != "0"


def applies(decoder: PackedDecoder, cache: PackedCache, max_len: int) -> bool:
    """Whether `greedy_loop` decodes this sentence exactly as the Python loop would (module doc)."""
    folded = cache.folded
    return (
        enabled()
        and cache.position == 0
        and cache.self_kv is None
        and cache.group_size == 1
        and cache.src_mask.shape[0] == 1
        and folded is not None
        and folded.operands[0][0].dim() == 2  # one group: the two-dimensional operands of `FoldedCross.attend`
        and max_len <= decoder.max_len  # beyond the table the Python loop raises the model's own message
        and decoder.greedy_weights is not None
    )


def greedy(
    decoder: PackedDecoder, cache: PackedCache, bos: int, eos: int, max_len: int
) -> tuple[list[int], list[float], torch.Tensor] | None:
    """Decode one sentence greedily from `cache` (as `PackedDecoder.start` made it) in one TorchScript call:
    (tokens, log-probabilities, the self-attention buffer), or None where the Python loop must do it."""
    loop = scripted_loop()
    weights = decoder.greedy_weights
    if loop is None or weights is None or not applies(decoder, cache, max_len):
        return None
    assert cache.folded is not None
    folded = [t for operands in cache.folded.operands for t in operands]
    # PackedDecoder.step's first buffer; the loop doubles it as the step does.
    buffer = decoder.scaled_embedding.new_empty((FIRST_CAPACITY, len(decoder.layers), 1, 2, decoder.heads, decoder.d_k))
    with torch.jit.optimized_execution(False):  # the graph as written: no rewrites that round differently
        return loop(
            buffer,
            decoder.scaled_embedding,
            decoder.positions,
            weights.flat,
            folded,
            decoder.output[0],
            weights.eps,
            bos,
            eos,
            max_len,
            decoder.heads,
            decoder.d_k,
        )
