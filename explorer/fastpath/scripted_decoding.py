"""Decoder steps run by TorchScript: the packed decoder's operations without Python between them.

A decoder step of a small model on a CPU is about 80 small tensor operations around 13 weight products, and the
Python that calls them costs about a microsecond or two an operation on top of what the operation itself costs.
Run by TorchScript's interpreter, the same ATen calls are made from C++:
- `step_rows`: one step, as `PackedDecoder.step` makes it without a head mask (one sentence or a batch, a beam
  or one row, the cross-attention folded or not);
- `greedy_loop`: the whole greedy search of one sentence (steps, the maximum, the stop test), what the
  Translate page and `explorer translate` run for a typed sentence: one call instead of a Python loop;
- `beam_loop`: the whole beam search of one sentence (steps, candidates, the policy, the buffer reordered by
  the kept parents), what the Beam page's and the tour's searches run: the search's Python bookkeeping was
  about 12% of such a sentence's time (3 of 27 ms on the shipped model, 2-core AMD EPYC).
`python -m benchmarks.probes.scripted_decoding 5 128` (both ways in one process, alternating; two runs): greedy on one
sentence 0.83x the time of the Python steps, beam 4 on one sentence 0.97-0.98x, greedy and beam 4 in batches of
32 0.96x and 0.97-0.99x; every hypothesis identical to the bit (benchmarks/RESULTS.md).
A C++ extension making the same calls measured 0.79x for greedy, but needs a compiler and 37 s of building on
the user's machine; `torch.compile` was slower than eager for this step (benchmarks/RESULTS.md).

Exactness: the functions below make the calls `PackedDecoder.step`, `search._greedy_one` and `search.beam_search`
make, in the same order, on the same tensors (the fused attention kernel, the same linear kernel on the same packed
weights, the folded cross-attention, LayerNorm, the in-place log-softmax, the maximum, `topk`, sums in float64).
TorchScript's graph optimizer would rewrite some of them (measured: the log-probabilities then differ in the last
bits), so every call runs with it off (`torch.jit.optimized_execution(False)`, a thread-local setting): the
interpreter runs the graph as written.
`tests/fastpath/test_scripted_decoding.py` and `test_scripted_beam.py` hold them to the Python steps bit for bit.

Where it applies (`layer_weights`): a float32 post-LN model on the CPU with float feed-forward blocks, on either
kernels the packed decoder chose (`linear`: MKL's addmm on the (in, out) copies, its choice on the Intel Xeon, or
oneDNN's prepacked linear, its choice on the AMD EPYC, where greedy on one sentence took 0.81x the time of the
Python steps); steps without a head mask on a decoder head; for the two loops also one sentence with its
cross-attention folded and a length limit within the positional table, and for the beam loop early stopping
without a trace or an n-gram ban (the Beam page's trace steps in Python).
Anything else steps in Python, with the same outputs. `EXPLORER_SCRIPTED=0` turns both off (to measure them).

TorchScript is deprecated in favour of `torch.compile`, which does not pay here; on a torch without it,
`scripted()` is None and every step runs in Python.
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import torch
import torch.nn.functional as F

from explorer.fastpath.linear_kernels import MKL, ONEDNN, Kernels, Linear
from explorer.fastpath.packed_cache import PackedCache
from explorer.fastpath.packing import FEW_ROWS_TRANSPOSED, DecoderLayer, MklFeedForward, OnednnFeedForward

VARIABLE = "EXPLORER_SCRIPTED"
FIRST_CAPACITY = 16  # target positions the self-attention buffer starts with (PackedDecoder.step's too)
PER_LAYER = 15  # tensors per decoder layer in `LayerWeights.flat`
PER_FOLDED = 4  # tensors per decoder layer from `FoldedCross.operands`


FOLDED_ONE, FOLDED_GROUPS, UNFOLDED = 0, 1, 2  # how a step's cross-attention runs (`CrossInputs.mode`)


class CrossInputs(NamedTuple):
    """What a step's cross-attention reads, as `decoder_layers` takes it (TorchScript passes a NamedTuple whole).

    operands: per layer four tensors: `FoldedCross.operands` (mode FOLDED_ONE: one sentence, two-dimensional;
        FOLDED_GROUPS: several, batched), or W^Q, b^Q, W^O, b^O of the cross-attention (UNFOLDED), which then
        attends over memory (layers, 2, groups, heads, src, d_k), the encoder's keys/values, with src_mask
        (groups, 1, 1, src), the rows in groups of `size` (a sentence's beam); folded, the step reads
        neither memory nor src_mask (any tensor stands in).
    """

    operands: list[torch.Tensor]
    memory: torch.Tensor
    src_mask: torch.Tensor
    mode: int
    size: int


class LayerWeights(NamedTuple):
    """A packed decoder's layers in the order `decoder_layers` reads them (a NamedTuple: TorchScript takes it whole).

    flat: per layer (`PER_LAYER`) W^QKV, b^QKV, W^O, b^O, W_1, b_1, W_2, b_2 (packed by the chosen kernels), three
        LayerNorms' weight and bias, and W_2 as nn.Linear keeps it, read transposed (for `few_rows` rows);
    cross: per layer W^Q, b^Q, W^O, b^O of the cross-attention, for steps it does not fold;
    eps: per layer the three LayerNorms';
    few_rows: [start, stop) of the row counts MklFeedForward multiplies by W_2 read transposed;
    onednn: the weights packed for oneDNN (`linear_kernels.ONEDNN`), else MKL's (in, out) copies.
    """

    flat: list[torch.Tensor]
    cross: list[torch.Tensor]
    eps: list[float]
    few_rows: list[int]
    onednn: bool


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, onednn: bool, relu: bool) -> torch.Tensor:
    """x·W + b (ReLU after it where `relu`) as `linear_kernels` applies a packed weight: oneDNN's prepacked linear
    (ReLU fused), or MKL's addmm/mm on the (in, out) copy (ReLU in place after it)."""
    if onednn:
        scalars: list[int | float | complex | None] = []  # TorchScript's `Scalar?[]`: the op's type, spelled out
        return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "relu" if relu else "none", scalars, "")
    out = torch.mm(x, weight) if bias is None else torch.addmm(bias, x, weight)
    return out.relu_() if relu else out


def second_ffn_weight(rows: int, few_rows: list[int]) -> int:
    """Where a layer's W_2 sits in its `PER_LAYER` weights for a step of `rows` rows: read transposed (14) for
    `few_rows` rows, as MklFeedForward chooses, else the (in, out) copy (6)."""
    return 14 if few_rows[0] <= rows < few_rows[1] else 6


def decoder_layers(
    y: torch.Tensor, position: int, buffer: torch.Tensor, layers: LayerWeights, cross: CrossInputs, heads: int, d_k: int
) -> torch.Tensor:
    """Every decoder layer of one step, as `PackedDecoder.step` computes it without a head mask:
    y (rows, d_model), the embedded tokens -> the last layer's output, this position's keys/values written.

    buffer: (capacity, layers, rows, 2, heads, d_k), with room for `position`;
    layers: the decoder's weights (`LayerWeights`); cross: the step's cross-attention (`CrossInputs`).
    """
    weights, eps, onednn = layers.flat, layers.eps, layers.onednn
    rows = y.shape[0]
    width = heads * d_k
    mode, size, operands = cross.mode, cross.size, cross.operands
    groups = rows // size
    second = second_ffn_weight(rows, layers.few_rows)
    slabs = buffer[position].unsqueeze(4).unbind(0)
    pasts = buffer[: position + 1].permute(1, 2, 3, 4, 0, 5).unbind(0)
    for index in range(len(weights) // 15):
        w = 15 * index  # PER_LAYER (TorchScript reads no module globals)
        c = 4 * index
        qkv = linear(y, weights[w], weights[w + 1], onednn, False).view(rows, 3, heads, 1, d_k)
        slabs[index].copy_(qkv[:, 1:])
        keys_values = pasts[index].unbind(1)
        attended = F.scaled_dot_product_attention(qkv[:, 0], keys_values[0], keys_values[1])
        out = linear(attended.reshape(rows, width), weights[w + 2], weights[w + 3], onednn, False)
        out += y
        y = torch.layer_norm(out, [out.shape[1]], weights[w + 8], weights[w + 9], eps[3 * index])
        if mode == 0:  # FOLDED_ONE: `FoldedCross.attend`, one group
            scores = torch.addmm(operands[c + 1], y, operands[c])
            attention = torch.softmax(scores.view(rows, heads, -1), dim=-1)
            out = torch.addmm(operands[c + 3], attention.view(rows, -1), operands[c + 2])
        elif mode == 1:  # FOLDED_GROUPS: `FoldedCross.attend`, batched by group
            scores = torch.baddbmm(operands[c + 1], y.view(groups, size, -1), operands[c])
            attention = torch.softmax(scores.view(groups, size, heads, -1), dim=-1).view(groups, size, -1)
            out = torch.baddbmm(operands[c + 3], attention, operands[c + 2]).view(rows, -1)
        else:  # UNFOLDED: a group's rows are the queries of one attention over its memory
            q = linear(y, operands[c], operands[c + 1], onednn, False).view(groups, size, heads, d_k).transpose(1, 2)
            kv = cross.memory[index]
            attended = F.scaled_dot_product_attention(q, kv[0], kv[1], attn_mask=cross.src_mask)
            out = linear(attended.transpose(1, 2).reshape(rows, width), operands[c + 2], operands[c + 3], onednn, False)
        out += y
        y = torch.layer_norm(out, [out.shape[1]], weights[w + 10], weights[w + 11], eps[3 * index + 1])
        hidden = linear(y, weights[w + 4], weights[w + 5], onednn, True)
        out = linear(hidden, weights[w + second], weights[w + 7], onednn, False)
        out += y
        y = torch.layer_norm(out, [out.shape[1]], weights[w + 12], weights[w + 13], eps[3 * index + 2])
    return y


def step_rows(
    tokens: torch.Tensor,
    position: int,
    buffer: torch.Tensor,
    embedding: torch.Tensor,
    positions: torch.Tensor,
    layers: LayerWeights,
    cross: CrossInputs,
    output: torch.Tensor,
    heads: int,
    d_k: int,
) -> torch.Tensor:
    """One decoder step: tokens (rows,) -> log-probabilities (rows, vocab), this position's keys/values written
    into `buffer`; embedding (vocab, d_model) is E·√d_model, positions (max_len, d_model) PE, output
    (d_model, vocab); the rest as `decoder_layers` reads them."""
    y = F.embedding(tokens, embedding)
    y += positions[position]  # (rows, d_model)
    y = decoder_layers(y, position, buffer, layers, cross, heads, d_k)
    logits = linear(y, output, None, layers.onednn, False)
    return torch.log_softmax(logits, -1, out=logits)  # in place, as PackedDecoder.step: the same values


def greedy_loop(
    buffer: torch.Tensor,
    embedding: torch.Tensor,
    positions: torch.Tensor,
    layers: LayerWeights,
    folded: list[torch.Tensor],
    output: torch.Tensor,
    bos: int,
    eos: int,
    max_len: int,
    heads: int,
    d_k: int,
) -> tuple[list[int], list[float], torch.Tensor]:
    """Greedy search of one sentence with folded cross-attention, as `search._greedy_one` makes it over
    `PackedDecoder.step`.

    buffer: (capacity, layers, 1, 2, heads, d_k), empty, doubled when full (as `PackedDecoder.step` does);
    folded: per layer `FoldedCross.operands` of the sentence; the rest as `step_rows` reads them.
    -> (tokens, their log-probabilities as float32 values, the buffer with every step's keys/values).
    """
    tokens: list[int] = []
    log_probs: list[float] = []
    token = bos
    cross = CrossInputs(folded, output, output, 0, 1)  # FOLDED_ONE, one row: memory and src_mask are not read
    for position in range(max_len):
        if position == buffer.shape[0]:  # no room for this position: double the buffer
            grown = buffer.new_empty([2 * position, buffer.shape[1], 1, 2, heads, d_k])
            grown[:position].copy_(buffer)
            buffer = grown
        y = embedding[token].unsqueeze(0) + positions[position]  # (1, d_model), a new tensor
        y = decoder_layers(y, position, buffer, layers, cross, heads, d_k)
        best = torch.log_softmax(linear(y, output, None, layers.onednn, False), dim=-1).max(dim=-1)
        token = int(best[1].item())
        tokens.append(token)
        log_probs.append(float(best[0].item()))
        if token == eos:
            break
    return tokens, log_probs, buffer


# What `beam_loop` hands back: per ended hypothesis (in the order the search ends them) its tokens, token
# log-probabilities, total and whether it finished with EOS; and False where a score was NaN.
Ended = tuple[list[list[int]], list[list[float]], list[float], list[bool], bool]


def beam_loop(
    buffer: torch.Tensor,
    embedding: torch.Tensor,
    positions: torch.Tensor,
    layers: LayerWeights,
    folded: list[torch.Tensor],
    output: torch.Tensor,
    bos: int,
    eos: int,
    max_len: int,
    beam: int,
    heads: int,
    d_k: int,
) -> Ended:
    """Beam search of one sentence with folded cross-attention, as `search.beam_search` makes it over
    `PackedDecoder.step` for one sentence with early stopping, no trace and no n-gram ban: the same steps on the
    same rows, the same candidates in the same order, the same policy.

    - Candidates (`candidates._top_candidates_few`): each live row's best 2k tokens by `topk`, their totals in
      float64 (the hypothesis' total plus the token's float32 log-probability), ranked by total, ties by
      (parent, rank): a stable descending sort is exactly that order. The first 2k, less those at -inf.
    - Policy (`policy.select_candidates`, `stop_reason` with early stopping): EOS among the first k finishes,
      other tokens fill the k live slots in rank order; stop with no live hypothesis, with k finished, or at
      `max_len` tokens, where the live ones end unfinished.
    - The self-attention buffer (capacity, layers, rows, 2, heads, d_k) doubled when full and reordered by the
      kept parents as `PackedCache.select` reorders it.
    A NaN score stops the loop with False: the Python search then decides what such a model gives.
    """
    ended_tokens: list[list[int]] = []
    ended_lps: list[list[float]] = []
    ended_totals: list[float] = []
    ended_finished: list[bool] = []
    no_tokens: list[int] = []
    no_lps: list[float] = []
    live_tokens: list[list[int]] = [no_tokens]  # the empty prefix (BOS is not an output token)
    live_lps: list[list[float]] = [no_lps]
    n_finished = 0
    n_cand = 2 * beam
    cross = CrossInputs(folded, output, output, 0, 1)  # FOLDED_ONE: memory and src_mask are not read
    last = torch.full([1], bos, dtype=torch.long)
    # The live hypotheses' totals, float64, taken from the previous step's sums (TorchScript's torch.tensor of a
    # list of floats rounds them through float32 first).
    prefix = torch.zeros([1], dtype=torch.float64)
    position = 0
    complete = True
    while True:
        if position == buffer.shape[0]:  # no room for this position: double the buffer, as the step does
            grown = buffer.new_empty([2 * position, buffer.shape[1], len(live_tokens), 2, heads, d_k])
            grown[:position].copy_(buffer)
            buffer = grown
        log_probs = step_rows(last, position, buffer, embedding, positions, layers, cross, output, heads, d_k)
        per_row = min(n_cand, log_probs.shape[1])
        values, indices = log_probs.topk(per_row, dim=1)  # (rows, per_row), as `row_top_k` for a few rows
        if bool(torch.isnan(values).any()):
            complete = False
            break
        totals = (values.double() + prefix.unsqueeze(1)).view(-1)  # (rows·per_row,) float64
        ordered, order = torch.sort(totals, descending=True, stable=True)
        best_totals: list[float] = ordered[:n_cand].tolist()
        best: list[int] = order[:n_cand].tolist()
        flat_tokens: list[int] = indices.view(-1).tolist()
        flat_lps: list[float] = values.view(-1).tolist()
        new_tokens: list[list[int]] = []
        new_lps: list[list[float]] = []
        new_totals: list[float] = []
        parents: list[int] = []
        kept_places: list[int] = []
        rank = 0
        for i in range(len(best)):
            total = best_totals[i]
            if total == -math.inf:
                continue  # an impossible candidate: dropped before the policy ranks
            index = best[i]
            parent = index // per_row
            token = flat_tokens[index]
            extended = live_tokens[parent] + [token]
            lps = live_lps[parent] + [flat_lps[index]]
            if token == eos:
                if rank < beam:
                    ended_tokens.append(extended)
                    ended_lps.append(lps)
                    ended_totals.append(total)
                    ended_finished.append(True)
                    n_finished += 1
            elif len(new_totals) < beam:
                new_tokens.append(extended)
                new_lps.append(lps)
                new_totals.append(total)
                parents.append(parent)
                kept_places.append(i)
            rank += 1
        if len(new_totals) == 0 or n_finished >= beam:
            break
        if position + 1 >= max_len:
            for i in range(len(new_totals)):
                ended_tokens.append(new_tokens[i])
                ended_lps.append(new_lps[i])
                ended_totals.append(new_totals[i])
                ended_finished.append(False)
            break
        kept = torch.tensor(parents, dtype=torch.long)
        reordered = buffer.new_empty([buffer.shape[0], buffer.shape[1], len(parents), 2, heads, d_k])
        reordered[: position + 1] = torch.index_select(buffer[: position + 1], 2, kept)
        buffer = reordered
        last = torch.tensor([t[-1] for t in new_tokens], dtype=torch.long)
        live_tokens, live_lps = new_tokens, new_lps
        prefix = ordered[torch.tensor(kept_places, dtype=torch.long)]
        position += 1
    return ended_tokens, ended_lps, ended_totals, ended_finished, complete


@dataclass(frozen=True)
class Scripted:
    """`greedy_loop`, `beam_loop` and `step_rows` compiled by TorchScript."""

    greedy_loop: Callable[..., tuple[list[int], list[float], torch.Tensor]]
    beam_loop: Callable[..., Ended]
    step_rows: Callable[..., torch.Tensor]


@functools.cache
def scripted() -> Scripted | None:
    """The functions compiled once per process (about 35 ms), or None where TorchScript cannot compile them."""
    try:
        with warnings.catch_warnings():
            # torch 2.13 warns that TorchScript is deprecated; this module says why it is used (module doc).
            warnings.simplefilter("ignore", DeprecationWarning)
            return Scripted(torch.jit.script(greedy_loop), torch.jit.script(beam_loop), torch.jit.script(step_rows))
    except Exception:  # noqa: BLE001 - any failure to compile means the Python steps, which give the same outputs
        return None


class PackedWeights(Protocol):
    """What `greedy` and `step` read of a `PackedDecoder`. A protocol, not the class: `packed_decoding.py` calls
    this module, so this module does not import it."""

    @property
    def scripted_weights(self) -> LayerWeights | None: ...
    @property
    def layers(self) -> Sequence[DecoderLayer]: ...
    @property
    def scaled_embedding(self) -> torch.Tensor: ...  # (vocab, d_model), E·√d_model
    @property
    def positions(self) -> torch.Tensor: ...  # (max_len, d_model), the positional table
    @property
    def output(self) -> Linear: ...  # the output projection, (d_model, vocab) on MKL
    @property
    def heads(self) -> int: ...
    @property
    def d_k(self) -> int: ...
    @property
    def max_len(self) -> int: ...


def layer_weights(layers: Sequence[DecoderLayer], kernels: Kernels, pre_norm: bool) -> LayerWeights | None:
    """A packed decoder's layers as `decoder_layers` reads them; None for what it does not implement (module
    doc: MKL or oneDNN kernels, post-LN, float feed-forward blocks, float32 on the CPU)."""
    onednn = kernels is ONEDNN
    if not (kernels is MKL or onednn) or pre_norm:
        return None
    flat: list[torch.Tensor] = []
    cross: list[torch.Tensor] = []
    eps: list[float] = []
    for layer in layers:
        ffn = layer.ffn
        if not isinstance(ffn, OnednnFeedForward if onednn else MklFeedForward):
            return None
        biased = []
        for weight, bias in (layer.qkv, layer.self_out, layer.cross_q, layer.cross_out):
            if bias is None:
                return None
            biased += [weight, bias]
        flat += [*biased[:4], ffn.in_1, ffn.b_1, ffn.in_2, ffn.b_2]
        cross += biased[4:]
        for norm_weight, norm_bias, norm_eps in layer.norms:
            flat += [norm_weight, norm_bias]
            eps.append(norm_eps)
        # W_2 read transposed for a few rows on MKL (`MklFeedForward`); oneDNN reads its one packed W_2 always.
        flat.append(ffn.out_2 if isinstance(ffn, MklFeedForward) else ffn.in_2)
    if any(t.device.type != "cpu" or t.dtype != torch.float32 for t in (*flat, *cross)):
        return None
    assert len(flat) == PER_LAYER * len(layers)
    assert FEW_ROWS_TRANSPOSED.step == 1
    few_rows = [0, 0] if onednn else [FEW_ROWS_TRANSPOSED.start, FEW_ROWS_TRANSPOSED.stop]
    return LayerWeights(flat, cross, eps, few_rows, onednn)


def enabled() -> bool:
    return os.environ.get(VARIABLE, "1") != "0"


def _one_group_folded(cache: PackedCache) -> list[torch.Tensor] | None:
    """The folded operands of a cache whose rows are all one sentence's, flat by layer; else None."""
    folded = cache.folded
    if folded is None or cache.src_mask.shape[0] != 1 or folded.operands[0][0].dim() != 2:
        return None  # unfolded, or several sentences (`FoldedCross.attend`'s batched operands)
    return [t for operands in folded.operands for t in operands]


# The leading arguments of `greedy_loop` and `beam_loop`: the empty first buffer, E·√d_model, PE, the layers' weights,
# the sentence's folded cross-attention, the output projection.
LoopInputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, LayerWeights, list[torch.Tensor], torch.Tensor]


def _one_sentence(decoder: PackedWeights, cache: PackedCache, max_len: int) -> tuple[Scripted, LoopInputs] | None:
    """The compiled functions and the inputs of a one-sentence search from `cache` (as `PackedDecoder.start` made
    it), or None where a loop does not apply and the search steps in Python (module doc)."""
    weights = decoder.scripted_weights  # first: a model it does not apply to never compiles the functions
    if weights is None or not enabled() or cache.position != 0 or cache.self_kv is not None:
        return None
    functions = scripted()
    if functions is None:
        return None
    folded = _one_group_folded(cache)
    if folded is None or max_len > decoder.max_len:  # beyond the table the Python loop raises the model's message
        return None
    # PackedDecoder.step's first buffer; the loops double it as the step does.
    buffer = decoder.scaled_embedding.new_empty((FIRST_CAPACITY, len(decoder.layers), 1, 2, decoder.heads, decoder.d_k))
    return functions, (buffer, decoder.scaled_embedding, decoder.positions, weights, folded, decoder.output[0])


def greedy(
    decoder: PackedWeights, cache: PackedCache, bos: int, eos: int, max_len: int
) -> tuple[list[int], list[float], torch.Tensor] | None:
    """Decode one sentence greedily from `cache` (as `PackedDecoder.start` made it) in one TorchScript call:
    (tokens, log-probabilities, the self-attention buffer), or None where the Python loop must do it."""
    found = _one_sentence(decoder, cache, max_len)
    if found is None:
        return None
    functions, inputs = found
    with torch.jit.optimized_execution(False):  # the graph as written: no rewrites that round differently
        return functions.greedy_loop(*inputs, bos, eos, max_len, decoder.heads, decoder.d_k)


def beam(
    decoder: PackedWeights, cache: PackedCache, bos: int, eos: int, max_len: int, beam_size: int
) -> list[tuple[list[int], list[float], float, bool]] | None:
    """Beam search of one sentence from `cache` (as `PackedDecoder.start` made it) in one TorchScript call: every
    ended hypothesis as (tokens, token log-probabilities, total, finished), in the order the Python search ends
    them; None where the Python search must run (and decide what a model with NaN scores gives). The cache is
    only read."""
    found = _one_sentence(decoder, cache, max_len)
    if found is None:
        return None
    functions, inputs = found
    with torch.jit.optimized_execution(False):  # the graph as written: no rewrites that round differently
        tokens, log_probs, totals, finished, complete = functions.beam_loop(
            *inputs, bos, eos, max_len, beam_size, decoder.heads, decoder.d_k
        )
    return list(zip(tokens, log_probs, totals, finished, strict=True)) if complete else None


def step(decoder: PackedWeights, tokens: torch.Tensor, cache: PackedCache, buffer: torch.Tensor) -> torch.Tensor | None:
    """`PackedDecoder.step`'s log-probabilities (rows, vocab) without a head mask, in one TorchScript call,
    this position's keys/values written into `buffer` (capacity, layers, rows, 2, heads, d_k); None where the
    Python step must make them."""
    weights = decoder.scripted_weights
    functions = None if weights is None or not enabled() else scripted()
    if functions is None or weights is None:
        return None
    folded = cache.folded
    if folded is None:
        mode, operands = UNFOLDED, weights.cross
    else:
        mode = FOLDED_ONE if folded.operands[0][0].dim() == 2 else FOLDED_GROUPS
        operands = [t for layer in folded.operands for t in layer]
    with torch.jit.optimized_execution(False):  # the graph as written: no rewrites that round differently
        return functions.step_rows(
            tokens,
            cache.position,
            buffer,
            decoder.scaled_embedding,
            decoder.positions,
            weights,
            CrossInputs(operands, cache.cross_kv, cache.src_mask, mode, cache.group_size),
            decoder.output[0],
            decoder.heads,
            decoder.d_k,
        )
