"""What the packed encoder and decoder share: a model's weights read once into the form a search multiplies by,
kept per model and rebuilt when a weight has changed in place since (training).

The packing itself (oneDNN or MKL) is `linear_kernels.py`; here: packing one linear, a fused W^Q/W^K/W^V, a
feed-forward block (float, or int8 as `explorer.quantize` leaves it), a LayerNorm, and the per-model cache both
paths keep.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import torch
import torch.nn.functional as F

from explorer.fastpath.linear_kernels import MKL, ONEDNN, Kernels, Linear, choose_kernels
from explorer.model.attention import MultiHeadAttention
from explorer.model.layers import PositionwiseFeedForward

if TYPE_CHECKING:
    from explorer.model.transformer import Transformer

Norm = tuple[torch.Tensor, torch.Tensor, float]  # a LayerNorm's (weight, bias, eps)
FeedForward = Callable[[torch.Tensor], torch.Tensor]  # Eq. 2 on rows: (rows, d_model) -> (rows, d_model)


def model_kernels(model: Transformer) -> Kernels:
    """The kernels both packed paths of `model` multiply by: chosen on the decoder step's weights (every decoder
    linear and the output projection), what a search multiplies by most often."""
    decoder = [m.weight for layer in model.decoder_layers for m in layer.modules() if isinstance(m, torch.nn.Linear)]
    return choose_kernels([w.detach() for w in (*decoder, model.output_weight)])


class PackedStack:
    """What the packed encoder and the packed decoder of one model both hold: the model (weakly, as the packed
    copy is kept per model and must not keep it alive), the heads and width of `attention` (the stack's first
    self-attention), where LayerNorm sits, and the kernels its weights are packed for."""

    def __init__(self, model: Transformer, attention: MultiHeadAttention) -> None:
        self.model_ref = weakref.ref(model)
        self.heads, self.d_k = model.config.n_heads, attention.d_k
        self.pre_norm = model.config.norm_position == "pre"
        self.kernels = model_kernels(model)

    def pack_linear(self, linear: torch.nn.Linear) -> Linear:
        return pack_linear(self.kernels, linear)

    def pack_qkv(self, attention: MultiHeadAttention) -> Linear:
        return pack_qkv(self.kernels, attention)

    def pack_feed_forward(self, block: PositionwiseFeedForward) -> FeedForward:
        return pack_feed_forward(self.kernels, block)

    def live_model(self) -> Transformer:
        model = self.model_ref()
        assert model is not None, f"the model of this {type(self).__name__} is gone"
        return model


def pack_linear(kernels: Kernels, linear: torch.nn.Linear) -> Linear:
    return kernels.pack(linear.weight), linear.bias.detach()


def is_int8_linear(module: torch.nn.Module) -> bool:
    """A linear layer `torch.ao.quantization.quantize_dynamic` made int8 (`explorer.quantize`). By name, so that a
    float model never imports torch.ao (slow to import, and only a session that asks for int8 needs it)."""
    kind = type(module)
    packed = getattr(module, "_packed_params", None)
    return (
        kind.__name__ == "Linear"
        and kind.__module__.startswith("torch.ao.nn.quantized.dynamic")
        and getattr(packed, "dtype", None) == torch.qint8
    )


def packable(model: Transformer) -> bool:
    """Every linear layer float `nn.Linear`, except feed-forward blocks whose two layers are both int8 (with the
    paper's ReLU only: the int8 kernels fuse it). An imported Marian model's switches (swish or GELU, a logits
    bias, `<pad>` banned) are computed by the packed step too; the scripted loop declines them
    (`PackedDecoder.scripted_weights`)."""
    blocks = [m for m in model.modules() if isinstance(m, PositionwiseFeedForward)]
    int8 = {id(m) for b in blocks if is_int8_linear(b.w_1) and is_int8_linear(b.w_2) for m in (b.w_1, b.w_2)}
    if int8 and model.config.activation != "relu":
        return False
    # Any linear layer: nn.Linear and its subclasses, and the quantized modules named Linear (not the
    # LinearPackedParams module an int8 layer holds its weights in).
    linears = (m for m in model.modules() if isinstance(m, torch.nn.Linear) or type(m).__name__ == "Linear")
    return all(type(m) is torch.nn.Linear or id(m) in int8 for m in linears)


def pack_feed_forward(kernels: Kernels, block: PositionwiseFeedForward) -> FeedForward:
    """max(0, x·W_1 + b_1)·W_2 + b_2 (Eq. 2), ReLU fused into the first product; an imported model's swish or
    GELU applied by the block's own function between the two products.

    Float layers run on `kernels`; int8 layers (`explorer.quantize`: the feed-forward weights in int8, the input
    quantized on the fly) on the same fbgemm operators their modules call, with their own prepacked weights:
    a packed int8 step reads about a third fewer bytes than a float one, where the general path with int8
    modules was slower than packed float (benchmarks/RESULTS.md).
    """
    w_1, w_2 = block.w_1, block.w_2
    if is_int8_linear(w_1) and is_int8_linear(w_2):
        first, second = (getattr(w, "_packed_params")._packed_params for w in (w_1, w_2))  # noqa: B009
        quantized = torch.ops.quantized
        # reduce_range=True as the modules pass it (fbgemm's 7-bit activations, no overflow in VNNI sums).
        return lambda x: quantized.linear_dynamic(quantized.linear_relu_dynamic(x, first, True), second, True)
    assert isinstance(w_1, torch.nn.Linear) and isinstance(w_2, torch.nn.Linear), "float or int8 feed-forward only"
    packed_1, packed_2, apply = pack_linear(kernels, w_1), pack_linear(kernels, w_2), kernels.apply
    activation = block.activation
    if activation is not torch.relu:  # an imported model's swish or GELU: the module's own function, not fused
        return lambda x: apply(activation(apply(x, packed_1, False)), packed_2, False)
    (in_1, b_1), (in_2, b_2) = packed_1, packed_2
    if kernels is ONEDNN and b_1 is not None and b_2 is not None:
        return OnednnFeedForward(in_1, b_1, in_2, b_2)
    if kernels is not MKL:
        return lambda x: apply(apply(x, packed_1, True), packed_2, False)
    assert b_1 is not None and b_2 is not None, "the paper's feed-forward layers have biases"
    out_2 = w_2.weight.detach().t()  # W_2 as nn.Linear keeps it, (d_model, d_ff), read transposed: no copy
    return MklFeedForward(in_1, b_1, in_2, b_2, out_2)


@dataclass(frozen=True)
class MklFeedForward:
    """Eq. 2 on MKL: W_1 (d_model, d_ff) and W_2 (d_ff, d_model) as (in, out) copies, W_2 also as the transposed
    view of nn.Linear's weight. A value, not a closure, so that the scripted greedy loop
    (`scripted_decoding.py`) can hand the same tensors to its own products."""

    in_1: torch.Tensor
    b_1: torch.Tensor
    in_2: torch.Tensor
    b_2: torch.Tensor
    out_2: torch.Tensor

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.addmm(self.b_1, x, self.in_1).relu_()
        return torch.addmm(self.b_2, hidden, self.out_2 if x.shape[0] in FEW_ROWS_TRANSPOSED else self.in_2)


@dataclass(frozen=True)
class OnednnFeedForward:
    """Eq. 2 on oneDNN: W_1 and W_2 in its blocked layout (`ONEDNN.pack`), ReLU fused into the first product. A
    value, as `MklFeedForward`, so that the scripted steps can make the same two calls."""

    in_1: torch.Tensor
    b_1: torch.Tensor
    in_2: torch.Tensor
    b_2: torch.Tensor

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        hidden = ONEDNN.apply(x, (self.in_1, self.b_1), True)
        return ONEDNN.apply(hidden, (self.in_2, self.b_2), False)


# Rows for which MKL multiplies by W_2 (d_ff -> d_model, the only weight wider in than out) faster in its
# (out, in) layout, read transposed, than in the (in, out) copy `MKL.pack` makes for every weight: beam 4 on one
# sentence (4 rows) and sentences of 2-12 pieces in the encoder. The shipped model's W_2 (1,024 -> 256), each
# product timed between the step's others, median of 40 (2 threads, the 2-core Intel Xeon): 34 against 22 µs at
# 2 rows, 38 against 27 at 4, 46 against 34 at 8, 51 against 40 at 12; equal at 1 row (21 against 22), and
# slower from 16 rows (67 against 56 µs; 101 against 82 at 32). In the search: beam 4 on one sentence 1.02x,
# greedy 1.01x (in one process, alternating, 6 rounds; outputs identical on 100 sentences, log-probabilities to
# float32 rounding).
FEW_ROWS_TRANSPOSED = range(2, 13)


def pack_qkv(kernels: Kernels, attention: MultiHeadAttention) -> Linear:
    """W^Q, W^K, W^V as one (3·d, d) linear: one product instead of three."""
    a = attention
    weight = torch.cat([a.w_q.weight, a.w_k.weight, a.w_v.weight])
    return kernels.pack(weight), torch.cat([a.w_q.bias, a.w_k.bias, a.w_v.bias]).detach()


@dataclass(frozen=True)
class DecoderLayer:
    """One decoder layer's weights as a packed step multiplies by them."""

    qkv: Linear  # W^Q, W^K, W^V as one (3·d, d) linear
    self_out: Linear
    cross_q: Linear
    cross_out: Linear
    ffn: FeedForward  # Eq. 2, float or int8
    norms: tuple[Norm, ...]  # self, cross, ffn


def pack_norm(module: torch.nn.LayerNorm) -> Norm:
    return module.weight.detach(), module.bias.detach(), module.eps


def layer_norm(x: torch.Tensor, norm: Norm) -> torch.Tensor:
    weight, bias, eps = norm
    return F.layer_norm(x, (weight.shape[0],), weight, bias, eps)


def residual(x: torch.Tensor, out: torch.Tensor, norm: Norm, pre_norm: bool) -> torch.Tensor:
    """A sub-layer's residual connection: x + out (pre-LN), or LayerNorm(x + out) (post-LN, Section 5.4) with the
    sum made in place in `out`, which must be a tensor of the caller's own (a product's result): one allocation
    fewer a sub-layer, the same sum (a + b == b + a in floating point)."""
    if pre_norm:
        return x + out
    out += x
    weight, bias, eps = norm
    return torch.layer_norm(out, (weight.shape[0],), weight, bias, eps)


_PARAMETERS: weakref.WeakKeyDictionary[torch.nn.Module, tuple[tuple[torch.Tensor, bool], ...]] = (
    weakref.WeakKeyDictionary()
)


def weight_versions(model: torch.nn.Module) -> tuple[int, ...]:
    """In-place version of every weight; -1 for inference tensors (made under `inference_mode`, never trained).

    The model's parameters are listed once per model and kept: walking its modules took 116 µs, twice per
    translated sentence (encoder and decoder), against 8 µs to read the versions. Training, loading and the
    optimizers change weights in place, which bumps their version; a parameter replaced by a new object is not
    seen (nothing in this project does that to a model it decodes with).
    """
    parameters = _PARAMETERS.get(model)
    if parameters is None:
        parameters = tuple((p, p.is_inference()) for p in model.parameters())
        _PARAMETERS[model] = parameters
    return tuple(-1 if inference else p._version for p, inference in parameters)


M = TypeVar("M", bound=torch.nn.Module)
P = TypeVar("P")


def cached(
    registry: weakref.WeakKeyDictionary[M, tuple[tuple[int, ...], P]],
    model: M,
    build: Callable[[M], P],
    versions: tuple[int, ...] | None = None,
) -> P:
    """`build(model)`, kept in `registry` for as long as the model lives and rebuilt after any weight changed.
    `versions`: `weight_versions(model)` read by the caller, who asks for the encoder and the decoder at once."""
    if versions is None:
        versions = weight_versions(model)
    entry = registry.get(model)
    if entry is None or entry[0] != versions:
        # Normal tensors even when first asked for inside `torch.inference_mode()`: the packed weights
        # outlive that call, and inference tensors could not be used in a later call outside it.
        with torch.inference_mode(False), torch.no_grad():
            entry = (versions, build(model))
        registry[model] = entry
    return entry[1]
