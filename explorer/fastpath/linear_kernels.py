"""How the packed decoding and encoding paths multiply by a linear layer's weights: oneDNN or MKL, measured.

A step of a small model multiplies a few rows by all of its weights (the shipped decoder: three layers and an
8,000-piece output projection, 18.3 MiB). Which library does that faster depends on the CPU, by more than either
wins by, so the choice is measured on the machine, once per process and weight shapes (`choose_kernels`):
- On a 2-core AMD EPYC (AVX-512, about 12 MB of cache), MKL's `addmm` (what F.linear calls) read the weights on
  one core for a few rows; oneDNN, with the weights reordered once into its blocked layout
  (`_reorder_linear_weight`, the prepacking `torch.compile` uses for CPU inference), read them on every core:
  3.0x faster at one row, 2.0x at 32 (`python -m benchmarks.probes.linear_kernels`, benchmarks/JOURNAL.md).
- On a 2-core Intel Xeon with AMX and a large L3, oneDNN spends about 15 µs
  on every call: MKL was 1.7x faster at one row and oneDNN only 1.1x faster at 32, and a greedy sentence took
  12.8 ms with MKL against 19.7 ms with oneDNN.
The two sum in different orders, so their results agree to float32 rounding, not bit for bit.
`EXPLORER_ONEDNN=0` forces `addmm`, `EXPLORER_ONEDNN=1` forces oneDNN (where torch has it).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

# A linear layer as a step multiplies it: (weight, bias), the weight as `Kernels.pack` made it.
Linear = tuple[torch.Tensor, torch.Tensor | None]


@dataclass(frozen=True)
class Kernels:
    """How a step multiplies by a linear layer: pack(weight (out, in)) once, then apply(x, linear, relu)."""

    name: str
    pack: Callable[[torch.Tensor], torch.Tensor]
    apply: Callable[[torch.Tensor, Linear, bool], torch.Tensor]


def _addmm(x: torch.Tensor, linear: Linear, relu: bool) -> torch.Tensor:
    weight, bias = linear  # weight: (in, out), contiguous
    out = torch.mm(x, weight) if bias is None else torch.addmm(bias, x, weight)
    return out.relu_() if relu else out


def _onednn(x: torch.Tensor, linear: Linear, relu: bool) -> torch.Tensor:
    weight, bias = linear
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "relu" if relu else "none", [], "")


# The weight copied once into an (in, out) layout, not the transposed view F.linear hands to addmm: for a few
# rows MKL reads it faster (beam 4 on one sentence 20.0 -> 17.1 ms, greedy 11.8 -> 11.6 ms, on the Intel CPU).
MKL = Kernels("MKL addmm", lambda w: w.detach().t().contiguous(), _addmm)
# Packed for batches of 32 rows: on the AMD CPU also the fastest layout for 1 and 4 rows (600 vs 946 us for the
# shipped decoder's weights at one row, packed for one).
ONEDNN = Kernels("oneDNN", lambda w: torch.ops.mkldnn._reorder_linear_weight(w.detach(), 32), _onednn)

VARIABLE = "EXPLORER_ONEDNN"
# oneDNN must be this much faster to be chosen: MKL is torch's own path (F.linear), and a choice made on a
# difference within the noise of a shared machine would flip between processes.
MARGIN = 1.10
ROWS = (1, 32)  # one sentence's greedy step; a batch (or a few sentences' beams)


def onednn_usable(weight: torch.Tensor) -> bool:
    """oneDNN's prepacked linears apply: float32 weights on a CPU, a torch build that has them."""
    return (
        weight.device.type == "cpu"
        and weight.dtype == torch.float32
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    )


Timer = Callable[[Kernels, Sequence[torch.Tensor], int], float]


def time_kernels(kernels: Kernels, weights: Sequence[torch.Tensor], rows: int, repeats: int = 5) -> float:
    """Seconds for one pass of `rows` rows through every weight (out, in), best of `repeats`."""
    passes = [(torch.randn(rows, w.shape[1]), (kernels.pack(w), None)) for w in weights]
    best = math.inf
    with torch.inference_mode():
        for _ in range(repeats + 1):  # the first pass warms caches and the library up
            start = time.perf_counter()
            for x, linear in passes:
                kernels.apply(x, linear, False)
            best = min(best, time.perf_counter() - start)
    return best


_CHOSEN: dict[tuple[object, ...], Kernels] = {}


def choose_kernels(weights: Sequence[torch.Tensor], timer: Timer = time_kernels) -> Kernels:
    """The kernels a model with these weights (out, in) multiplies by on this machine.

    MKL where oneDNN cannot run (CUDA, half precision, builds without it) or `EXPLORER_ONEDNN=0`; oneDNN with
    `EXPLORER_ONEDNN=1`. Otherwise measured: both on the same shapes at 1 and 32 rows, oneDNN chosen when the
    geometric mean of its speed-ups is at least `MARGIN`. Measured on the weights themselves (each kernel packs
    its own copy; they are not changed), once per process, thread count and shapes: 71 ms for the shipped
    model, paid by the first translation of a process.
    """
    forced = os.environ.get(VARIABLE)
    if not weights or not onednn_usable(weights[0]) or forced == "0":
        return MKL
    if forced == "1":
        return ONEDNN
    key = (torch.get_num_threads(), tuple(tuple(w.shape) for w in weights))
    if key not in _CHOSEN:
        speedups = [timer(MKL, weights, rows) / timer(ONEDNN, weights, rows) for rows in ROWS]
        mean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        _CHOSEN[key] = ONEDNN if mean >= MARGIN else MKL
    return _CHOSEN[key]
