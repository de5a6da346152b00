"""Measured counterpart of Table 1: time and memory of one layer of each kind, on the current device.

At equal d and across a range of n we time
- a self-attention layer: the project's own `MultiHeadAttention` (Section 3.2.2), twice: on its default
  fused path (`scaled_dot_product_attention`, which on recent PyTorch never materialises the n×n weights,
  so its memory grows like n·d) and on its explicit path (`need_weights=True`: softmax(QKᵀ/√d_k) kept,
  memory growing like n²·h, the textbook picture),
- a recurrent layer: `torch.nn.LSTM(d, d)`, whose n time steps run one after another (O(n) sequential
  operations), so its time grows with n even when each step is a tiny d×d product,
- a convolutional layer: one `Conv1d(d, d, k)` ("complexity per layer", as in Table 1),
- a stack of ceil(log_k(n)) dilated convolutions (dilation 1, k, k², ...): what a convolutional network
  needs so that every output sees every input (the O(log_k(n)) maximum path length).

Times are medians of `repeats` runs after one warm-up run (a run of a microsecond layer is several calls,
averaged): `forward_ms` under `torch.no_grad()`, `train_ms` for forward + backward of `output.sum()`; on
CUDA the clock stops only after `torch.cuda.synchronize`. Memory (`memory_mb`) is what `memory_measure` says:
on CUDA the peak allocated during forward + backward above what was allocated before
("cuda_peak_allocated"); on CPU, where PyTorch keeps no peak counter, the bytes of the tensors autograd
saves for backward, i.e. the activation memory of training, parameters excluded
("cpu_saved_for_backward").

Threads are left as the caller set them (`torch.set_num_threads` is not touched).
"""

from __future__ import annotations

import csv
import io
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from explorer.model.attention import MultiHeadAttention
from explorer.paper import CONV_DILATED, CONVOLUTIONAL, LAYER_LABELS, RECURRENT, SELF_ATTENTION
from explorer.text.spreadsheet import safe_rows

SELF_ATTENTION_EXPLICIT = "self_attention_explicit"
# Layers measured, in plotting order. `FORMULA_OF` names the Table 1 row whose formula each one follows.
MEASURED_LAYERS: tuple[str, ...] = (SELF_ATTENTION, SELF_ATTENTION_EXPLICIT, RECURRENT, CONVOLUTIONAL, CONV_DILATED)
FORMULA_OF: dict[str, str] = {
    SELF_ATTENTION: SELF_ATTENTION,
    SELF_ATTENTION_EXPLICIT: SELF_ATTENTION,
    RECURRENT: RECURRENT,
    CONVOLUTIONAL: CONVOLUTIONAL,
    CONV_DILATED: CONVOLUTIONAL,
}
MEASURED_LABELS: dict[str, str] = {
    SELF_ATTENTION: "Self-attention (fused kernel)",
    SELF_ATTENTION_EXPLICIT: "Self-attention (explicit, weights kept)",
    RECURRENT: "Recurrent (LSTM)",
    CONVOLUTIONAL: "Convolutional (1 layer)",
    CONV_DILATED: "Dilated convolutions (log_k(n) layers)",
}
assert set(FORMULA_OF.values()) <= set(LAYER_LABELS), "every measured layer follows a Table 1 row"

MEMORY_MEASURES: dict[str, str] = {
    "cuda_peak_allocated": "peak memory allocated, forward + backward (MB, CUDA)",
    "cpu_saved_for_backward": "activations saved for backward (MB, CPU estimate)",
}

DEFAULT_NS: tuple[int, ...] = (16, 32, 64, 128, 256, 512)


def sequence_lengths(n_max: int, n_min: int = 16) -> tuple[int, ...]:
    """Powers of two from n_min up to n_max (both included when they are powers of two)."""
    assert 1 <= n_min <= n_max, f"need 1 <= n_min <= n_max, got n_min={n_min}, n_max={n_max}"
    ns, n = [], n_min
    while n <= n_max:
        ns.append(n)
        n *= 2
    return tuple(ns)


def attention_heads(d: int) -> int:
    """h = 8 as in the base model when d allows it, else the largest of 4, 2, 1 that divides d."""
    return next(h for h in (8, 4, 2, 1) if d % h == 0)


def dilated_depth(n: int, kernel: int) -> int:
    """Layers of a dilated stack (dilations 1, k, k², ...) whose receptive field k^L covers n positions."""
    depth, reach = 1, kernel
    while reach < n:
        depth, reach = depth + 1, reach * kernel
    return depth


class _SelfAttention(nn.Module):
    """Self-attention over x: queries, keys and values all from the same sequence, no mask.

    explicit=True asks for the weights, which takes the layer's explicit path (the n×n matrix is built).
    """

    def __init__(self, d: int, explicit: bool = False) -> None:
        super().__init__()
        self.attention = MultiHeadAttention(d_model=d, n_heads=attention_heads(d))
        self.explicit = explicit

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (batch, n, d) -> (batch, n, d)
        return self.attention(x, x, need_weights=self.explicit).output


class _Recurrent(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(d, d, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (batch, n, d) -> (batch, n, d)
        return self.lstm(x)[0]


class _Convolutions(nn.Module):
    """`depth` Conv1d(d, d, kernel) layers with dilations `kernel**l` (1 for a plain layer), length kept."""

    def __init__(self, d: int, kernel: int, depth: int = 1, dilated: bool = False) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv1d(d, d, kernel, padding="same", dilation=kernel**level if dilated else 1) for level in range(depth)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (batch, n, d) -> (batch, n, d)
        h = x.transpose(1, 2)
        for conv in self.convs:
            h = conv(h)
        return h.transpose(1, 2)


def _build(layer: str, n: int, d: int, kernel: int) -> tuple[nn.Module, int]:
    """The module for `layer` and its number of stacked layers."""
    if layer in (SELF_ATTENTION, SELF_ATTENTION_EXPLICIT):
        return _SelfAttention(d, explicit=layer == SELF_ATTENTION_EXPLICIT), 1
    if layer == RECURRENT:
        return _Recurrent(d), 1
    if layer == CONVOLUTIONAL:
        return _Convolutions(d, kernel), 1
    depth = dilated_depth(n, kernel)
    return _Convolutions(d, kernel, depth, dilated=True), depth


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _median_ms(run: Callable[[], None], device: torch.device, repeats: int, min_repeat_s: float) -> float:
    """Median over `repeats` of the mean time of one call, in ms, after a warm-up call.

    A layer that takes microseconds is called several times per repeat (enough for ~`min_repeat_s`), so
    timer resolution and scheduler noise do not dominate the small sizes.
    """
    start = time.perf_counter()
    run()  # warm-up: allocator, kernel selection, lazy initialisation
    _synchronize(device)
    warm_up_s = time.perf_counter() - start
    calls = max(1, min(100, math.ceil(min_repeat_s / max(warm_up_s, 1e-6))))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        _synchronize(device)
        times.append((time.perf_counter() - start) * 1e3 / calls)
    return statistics.median(times)


def _saved_for_backward_bytes(module: nn.Module, x: torch.Tensor) -> int:
    """Bytes of the distinct non-parameter tensors autograd saves for backward in one forward pass."""
    parameter_storages = {p.untyped_storage().data_ptr() for p in module.parameters()}
    seen: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameter_storages:
            seen[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        module(x)
    return sum(seen.values())


def _memory_mb(module: nn.Module, x: torch.Tensor, train_step: Callable[[], None]) -> tuple[float, str]:
    if x.device.type == "cuda":
        _synchronize(x.device)
        torch.cuda.reset_peak_memory_stats(x.device)
        before = torch.cuda.memory_allocated(x.device)
        train_step()
        _synchronize(x.device)
        return (torch.cuda.max_memory_allocated(x.device) - before) / 2**20, "cuda_peak_allocated"
    return _saved_for_backward_bytes(module, x) / 2**20, "cpu_saved_for_backward"


def measure_layers(
    ns: Sequence[int] = DEFAULT_NS,
    d: int = 128,
    *,
    kernel: int = 3,
    batch: int = 1,
    device: str | torch.device = "cpu",
    backward: bool = True,
    repeats: int = 3,
    min_repeat_s: float = 0.005,
    progress: Callable[[float, str], None] | None = None,
) -> list[dict[str, Any]]:
    """Time and memory of each layer in MEASURED_LAYERS for every n in `ns`, at width d.

    Input: a random (batch, n, d) float32 tensor. Each repeat calls the layer often enough to last about
    `min_repeat_s` (at most 100 calls) and reports the mean of those calls. Returns one row per (layer, n),
    layers in MEASURED_LAYERS order, with keys: layer, label, n, d, kernel, batch, depth (stacked layers),
    sequential_steps (n for the LSTM, the depth otherwise), device, forward_ms, train_ms (None when
    backward=False), memory_mb and memory_measure (see MEMORY_MEASURES; None when backward=False).
    `progress(fraction, message)` is called after each row.
    """
    assert len(ns) > 0 and all(n >= 1 for n in ns), f"ns must be positive sequence lengths, got {ns}"
    assert d >= 1 and kernel >= 2 and batch >= 1 and repeats >= 1, (
        f"need d >= 1, kernel >= 2, batch >= 1, repeats >= 1; got d={d}, kernel={kernel}, batch={batch}, "
        f"repeats={repeats}"
    )
    device = torch.device(device)
    total, rows = len(MEASURED_LAYERS) * len(ns), []
    # Initialise weights and inputs from a private generator state: measuring must not move the caller's RNG.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        for layer in MEASURED_LAYERS:
            for n in ns:
                module, depth = _build(layer, n, d, kernel)
                module = module.to(device)
                x = torch.randn(batch, n, d).to(device)
                x_grad = x.clone().requires_grad_(True)

                # Defaults bind this iteration's layer and inputs (the closures are called within it anyway).
                def forward_only(module: nn.Module = module, x: torch.Tensor = x) -> None:
                    with torch.no_grad():
                        module(x)

                def train_step(module: nn.Module = module, x_grad: torch.Tensor = x_grad) -> None:
                    module.zero_grad(set_to_none=True)
                    x_grad.grad = None
                    module(x_grad).sum().backward()

                forward_ms = _median_ms(forward_only, device, repeats, min_repeat_s)
                train_ms = memory_mb = memory_measure = None
                if backward:
                    train_ms = _median_ms(train_step, device, repeats, min_repeat_s)
                    memory_mb, memory_measure = _memory_mb(module, x_grad, train_step)
                rows.append(
                    {
                        "layer": layer,
                        "label": MEASURED_LABELS[layer],
                        "n": n,
                        "d": d,
                        "kernel": kernel,
                        "batch": batch,
                        "depth": depth,
                        "sequential_steps": n if layer == RECURRENT else depth,
                        "device": str(device),
                        "forward_ms": forward_ms,
                        "train_ms": train_ms,
                        "memory_mb": memory_mb,
                        "memory_measure": memory_measure,
                    }
                )
                if progress is not None:
                    progress(len(rows) / total, f"{MEASURED_LABELS[layer]}, n = {n}")
    return rows


def rows_to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Measurement rows as CSV text (header from the first row's keys), for download; text cells a spreadsheet
    would evaluate are quoted (explorer.text.spreadsheet)."""
    assert rows, "no rows to write"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(safe_rows(rows))
    return buffer.getvalue()
