"""How the packed decoding and encoding paths multiply by a linear layer's weights: oneDNN or MKL.

A step of a small model multiplies a few rows by all of its weights (the shipped decoder: three layers and an
8,000-piece output projection, 18.3 MiB), more than this CPU's caches hold, so it is bound by reading them.
MKL's `addmm` (what F.linear calls) reads them on one core for a few rows, in a layout slow for one row;
oneDNN, with the weights reordered once into its blocked layout (`_reorder_linear_weight`, the prepacking
`torch.compile` uses for CPU inference), reads them on every core. For the shipped decoder's weights it is
3.0x faster at one row, 4.5x at 4, 2.0x at 32 and 1.4x at 128 (`python -m benchmarks.linear_kernels`,
benchmarks/RESULTS.md). The two sum in different orders, so their results agree to float32 rounding, not bit
for bit. `EXPLORER_ONEDNN=0` keeps `addmm`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import torch

# A linear layer as a step multiplies it: (weight, bias), the weight as `Kernels.pack` made it.
Linear = tuple[torch.Tensor, torch.Tensor | None]


@dataclass(frozen=True)
class Kernels:
    """How a step multiplies by a linear layer: pack(weight (out, in)) once, then apply(x, linear, relu)."""

    pack: Callable[[torch.Tensor], torch.Tensor]
    apply: Callable[[torch.Tensor, Linear, bool], torch.Tensor]


def _addmm(x: torch.Tensor, linear: Linear, relu: bool) -> torch.Tensor:
    weight, bias = linear  # weight: (in, out), as F.linear passes it to addmm
    out = torch.mm(x, weight) if bias is None else torch.addmm(bias, x, weight)
    return out.relu_() if relu else out


def _onednn(x: torch.Tensor, linear: Linear, relu: bool) -> torch.Tensor:
    weight, bias = linear
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "relu" if relu else "none", [], "")


MKL = Kernels(lambda w: w.detach().t(), _addmm)
# Packed for batches of 32 rows: on this 2-core CPU also the fastest layout for 1 and 4 rows (600 vs 946 us
# for the shipped decoder's weights at one row, packed for one).
ONEDNN = Kernels(lambda w: torch.ops.mkldnn._reorder_linear_weight(w.detach(), 32), _onednn)


def kernels_for(weight: torch.Tensor) -> Kernels:
    """oneDNN for a model whose weights are float32 on a CPU where this torch build has it; MKL's addmm otherwise
    (CUDA, half precision, builds without oneDNN)."""
    usable = (
        weight.device.type == "cpu"
        and weight.dtype == torch.float32
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
        and os.environ.get("EXPLORER_ONEDNN", "1") != "0"
    )
    return ONEDNN if usable else MKL
