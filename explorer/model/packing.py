"""What the packed encoder and decoder share: a model's weights read once into the form a search multiplies by,
kept per model and rebuilt when a weight has changed in place since (training).

The packing itself (oneDNN or MKL) is `linear_kernels.py`; here: packing one linear, a fused W^Q/W^K/W^V, a
LayerNorm, and the per-model cache both paths keep.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeVar

import torch
import torch.nn.functional as F

from explorer.model.attention import MultiHeadAttention
from explorer.model.linear_kernels import Kernels, Linear

Norm = tuple[torch.Tensor, torch.Tensor, float]  # a LayerNorm's (weight, bias, eps)


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


def weight_versions(model: torch.nn.Module) -> tuple[int, ...]:
    """In-place version of every weight; -1 for inference tensors (made under `inference_mode`, never trained)."""
    return tuple(-1 if p.is_inference() else p._version for p in model.parameters())


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
