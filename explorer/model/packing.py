"""What the packed encoder and decoder share: a model's weights read once into the form a search multiplies by,
kept per model and rebuilt when a weight has changed in place since (training).

The packing itself (oneDNN or MKL) is `linear_kernels.py`; here: packing one linear, a fused W^Q/W^K/W^V, a
LayerNorm, and the per-model cache both paths keep.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import torch
import torch.nn.functional as F

from explorer.model.attention import MultiHeadAttention
from explorer.model.linear_kernels import Kernels, Linear, choose_kernels

if TYPE_CHECKING:
    from explorer.model.transformer import Transformer

Norm = tuple[torch.Tensor, torch.Tensor, float]  # a LayerNorm's (weight, bias, eps)


def model_kernels(model: Transformer) -> Kernels:
    """The kernels both packed paths of `model` multiply by: chosen on the decoder step's weights (every decoder
    linear and the output projection), what a search multiplies by most often."""
    decoder = [m.weight for layer in model.decoder_layers for m in layer.modules() if isinstance(m, torch.nn.Linear)]
    output = model.embedding.weight if model.config.share_embeddings else model.output_projection.weight
    return choose_kernels([w.detach() for w in (*decoder, output)])


def pack_linear(kernels: Kernels, linear: torch.nn.Linear) -> Linear:
    return kernels.pack(linear.weight), linear.bias.detach()


def pack_qkv(kernels: Kernels, attention: MultiHeadAttention) -> Linear:
    """W^Q, W^K, W^V as one (3·d, d) linear: one product instead of three."""
    a = attention
    weight = torch.cat([a.w_q.weight, a.w_k.weight, a.w_v.weight])
    return kernels.pack(weight), torch.cat([a.w_q.bias, a.w_k.bias, a.w_v.bias]).detach()


def pack_norm(module: torch.nn.LayerNorm) -> Norm:
    return module.weight.detach(), module.bias.detach(), module.eps


def layer_norm(x: torch.Tensor, norm: Norm) -> torch.Tensor:
    weight, bias, eps = norm
    return F.layer_norm(x, (weight.shape[0],), weight, bias, eps)


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


def cached(registry: weakref.WeakKeyDictionary[M, tuple[tuple[int, ...], P]], model: M, build: Callable[[M], P]) -> P:
    """`build(model)`, kept in `registry` for as long as the model lives and rebuilt after any weight changed."""
    versions = weight_versions(model)
    entry = registry.get(model)
    if entry is None or entry[0] != versions:
        # Normal tensors even when first asked for inside `torch.inference_mode()`: the packed weights
        # outlive that call, and inference tensors could not be used in a later call outside it.
        with torch.inference_mode(False), torch.no_grad():
            entry = (versions, build(model))
        registry[model] = entry
    return entry[1]
