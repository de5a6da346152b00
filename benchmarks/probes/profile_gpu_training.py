"""Where a CUDA training step of the `base` model goes, and what each lever buys, measured side by side.

    python -m benchmarks.probes.profile_gpu_training [--steps N] [--warmup N] [--no-compile]

The goal is model FLOP/s ≥ 40% of the measured bf16 matmul peak for `base` in bf16 autocast. Two timed
steps after one warm-up step measured 3.3%; this probe answers why:
1. new shapes against repeated ones: every variant is warmed on `--warmup` batches of other shapes, then
   timed twice over the same batches, the first time on shapes it has not seen (a kernel that prepares
   itself per shape, as cuDNN's attention does, pays then);
2. a torch.profiler pass over a few eager steps: GPU-busy fraction of the wall time (near 1: the GPU is the
   limit; well below: the host launching kernels is) and the kernels that take the GPU's time;
3. the levers, each against the engine as it is: the SDPA kernels allowed on CUDA, fused Adam, `is_causal`
   instead of a bool causal mask, `torch.compile`, and twice the batch.

Needs CUDA; prints one line and exits 0 without it.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchmarks import command_line_runtime

command_line_runtime(__name__)

import torch
from torch.nn.attention import SDPBackend

import explorer.model.attention as attention
from benchmarks.common import matmul_peak, parallel_ids, si, synchronize
from benchmarks.models import training_flops
from benchmarks.probes import parser
from benchmarks.training import train_step_fn
from explorer.config import ModelConfig, preset
from explorer.data.batching import Batch, collate, token_budget_batches
from explorer.model import Transformer
from explorer.training.schedule import make_optimizer

# SDPA kernels: torch's own choice among all of them (cuDNN's first on Hopper), and the engine's.
EVERY_KERNEL: list[SDPBackend] = [
    b for b in SDPBackend.__members__.values() if b not in (SDPBackend.ERROR, SDPBackend.OVERRIDEABLE)
]
ENGINE_KERNELS = list(attention.CUDA_SDPA_BACKENDS)


@contextlib.contextmanager
def bool_causal_mask() -> Iterator[None]:
    """The decoder's self-attention as it once ran: SDPA reads an explicit bool causal mask
    (`causal=False`) instead of taking `is_causal`. A probe-only patch, undone on exit."""
    original = attention.MultiHeadAttention.forward

    def forward(self: attention.MultiHeadAttention, *args: Any, **kwargs: Any) -> Any:
        kwargs["causal"] = False
        return original(self, *args, **kwargs)

    attention.MultiHeadAttention.forward = forward  # type: ignore[method-assign]
    try:
        yield
    finally:
        attention.MultiHeadAttention.forward = original  # type: ignore[method-assign]


@contextlib.contextmanager
def sdpa_backends(kernels: list[SDPBackend]) -> Iterator[None]:
    """Let CUDA's SDPA pick only from `kernels` in the engine's attention, probe-only, undone on exit."""
    original = attention.CUDA_SDPA_BACKENDS
    attention.CUDA_SDPA_BACKENDS = kernels
    try:
        yield
    finally:
        attention.CUDA_SDPA_BACKENDS = original


def batches_of(config: ModelConfig, budget: int, n: int, device: str, seed: int = 0) -> list[Batch]:
    """`n` token-budget batches of caption-like lengths (Multi30k's: mean about 13 pieces per side)."""
    src, tgt, _ = parallel_ids(29000, config.vocab_size, seed)
    src_len, tgt_len = [len(s) + 1 for s in src], [len(t) + 1 for t in tgt]
    order = token_budget_batches(src_len, tgt_len, budget, shuffle=True, seed=seed)
    # Cycled: 29,000 caption pairs make about 22 batches of 25,000 tokens (11 of 50,000), fewer than a run of
    # warm-up and timed steps asks for.
    order = [order[i % len(order)] for i in range(n)]
    ids = dict(pad_id=config.pad_id, bos_id=config.bos_id, eos_id=config.eos_id)
    return [collate([src[i] + [config.eos_id] for i in b], [tgt[i] for i in b], **ids).to(device) for b in order]


def make_step(config: ModelConfig, device: str, fused: bool, compiled: bool, seed: int = 0) -> Callable[[Batch], None]:
    """The training benchmark's step (bf16 autocast on CUDA), with the trainer's Adam or torch's default one."""
    torch.manual_seed(seed)
    model = Transformer(config).to(device).train()
    # dynamic=True as the training benchmark: with torch's default, new shapes took about 5 s a step (H200).
    run = torch.compile(model, dynamic=True) if compiled else model
    if fused:
        optimizer = make_optimizer(model.parameters())  # fused on CUDA
    else:
        optimizer = torch.optim.Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-9)
    return train_step_fn(model, lambda b: run(b.src, b.tgt_in).logits, config, device, optimizer)


def timed_steps(
    step: Callable[[Batch], None], warm: list[Batch], timed: list[Batch], device: str
) -> tuple[float, float, float]:
    """(seconds of the warm-up, of the timed steps on shapes not seen before, of the same steps again)."""
    spans = []
    for part in (warm, timed, timed):
        start = time.perf_counter()
        for b in part:
            step(b)
        synchronize(device)
        spans.append(time.perf_counter() - start)
    return spans[0], spans[1], spans[2]


def profile(step: Callable[[Batch], None], batches: list[Batch], device: str) -> None:
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        for b in batches:
            step(b)
        synchronize(device)
        wall = time.perf_counter() - start
    events = prof.key_averages()
    kernel_us = sum(e.self_device_time_total for e in events if e.device_type == torch.autograd.DeviceType.CUDA)
    print(
        f"  profile of {len(batches)} eager steps: wall {wall * 1e3:.0f} ms, GPU kernels {kernel_us / 1e3:.0f} ms "
        f"(GPU busy {kernel_us / 1e6 / wall:.0%} of the wall time)",
        flush=True,
    )
    print(events.table(sort_by="self_device_time_total", row_limit=18, max_name_column_width=60), flush=True)


def main(argv: list[str] | None = None) -> None:
    command = parser("benchmarks.probes.profile_gpu_training", __doc__)
    command.add_argument("--steps", type=int, default=20)
    command.add_argument("--warmup", type=int, default=10)
    command.add_argument("--budget", type=int, default=25000)
    command.add_argument("--no-compile", action="store_true")
    command.add_argument("--cpu-smoke", action="store_true", help="a tiny model on the CPU: checks the script runs")
    args = command.parse_args(argv)
    if args.cpu_smoke:
        device, size = "cpu", 256
        config = ModelConfig(vocab_size=500, d_model=32, n_heads=4, d_ff=64, n_encoder_layers=1, n_decoder_layers=1)
    elif not torch.cuda.is_available():
        print("CUDA is not available: the GPU training probe did not run")
        return
    else:
        device, size, config = "cuda", 8192, preset("base", vocab_size=8000)
        print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    peak = matmul_peak(device, torch.bfloat16, size)
    print(f"bf16 matmul peak ({size}², torch.mm): {si(peak, 'FLOP/s')}", flush=True)

    engine, b = ENGINE_KERNELS, args.budget
    # name, SDPA kernels, fused Adam, is_causal, compile, budget
    variants: list[tuple[str, list[SDPBackend], bool, bool, bool, int]] = [
        ("all kernels (cuDNN), fused Adam, is_causal", EVERY_KERNEL, True, True, False, b),
        ("flash + efficient + math (the engine now)", engine, True, True, False, b),
        ("efficient only", [SDPBackend.EFFICIENT_ATTENTION], True, True, False, b),
        ("math only", [SDPBackend.MATH], True, True, False, b),
        ("the engine, Adam not fused (torch's default)", engine, False, True, False, b),
        ("the engine, bool causal mask", engine, True, False, False, b),
        ("the engine, 2× batch", engine, True, True, False, 2 * b),
    ]
    if not args.no_compile:
        variants += [("torch.compile + the engine", engine, True, True, True, b)]
    cache: dict[int, list[Batch]] = {}
    rows = []
    for name, backends, fused, causal, compiled, budget in variants:
        if budget not in cache:
            cache[budget] = batches_of(config, budget, args.warmup + args.steps, device)
        data = cache[budget]
        warm, timed = data[: args.warmup], data[args.warmup :]
        flops = sum(training_flops(config, b.src.shape[0], b.src.shape[1], b.tgt_in.shape[1]) for b in timed)
        tokens = sum(b.n_tgt_tokens for b in timed)
        try:
            with sdpa_backends(backends), contextlib.nullcontext() if causal else bool_causal_mask():
                step = make_step(config, device, fused, compiled)
                warm_s, first_s, again_s = timed_steps(step, warm, timed, device)
                if name.startswith("flash"):
                    profile(step, timed[:5], device)
        except Exception as error:  # noqa: BLE001 - a lever that fails on this machine is reported, not fatal
            print(f"  {name}: failed: {type(error).__name__}: {error}"[:400], flush=True)
            continue
        row = (
            name,
            f"{tokens / again_s:,.0f}",
            f"{again_s / len(timed) * 1e3:.1f}",
            f"{flops / again_s / peak:.1%}",
            f"{first_s / len(timed) * 1e3:.1f}",
            f"{warm_s:.1f}",
        )
        rows.append(row)
        print(f"  {' | '.join(row)}", flush=True)
        del step
        if device == "cuda":
            torch.cuda.empty_cache()
    print("\n| variant | target tokens/s | ms/step | of bf16 matmul peak | ms/step, shapes seen first | warm-up s |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    median_len = statistics.median(b.src.shape[1] for b in cache[args.budget])
    print(f"\nbatches: ≤{args.budget} padded tokens per side, median padded source length {median_len}")


if __name__ == "__main__":
    main()
