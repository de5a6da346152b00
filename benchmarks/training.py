"""Training throughput: explorer's Transformer vs `torch.nn.Transformer`, same config, batches, loss and Adam.

Both models start from the same weights (explorer's, copied into nn.Transformer's packed layout), read the same
token-budget batches in the same order, and take full optimizer steps: forward, label-smoothed loss,
backward, Adam. Reported: target tokens/s of each, their ratio (median of per-round ratios), and the model
FLOP/s as a fraction of the machine's fp32 (CPU) or bf16 (CUDA) matmul peak measured in the same run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from benchmarks.common import (
    Options,
    Result,
    apply_threads,
    autocast_for,
    benchmark_tokenizer,
    collate_pairs,
    interleaved,
    matmul_peak,
    paired_ratio,
    parallel_ids,
    print_table,
    ratio_text,
    si,
    synchronize,
    threads_text,
)
from benchmarks.memory import memory_rows
from benchmarks.models import TorchTransformer, copy_weights, training_flops
from explorer.config import ModelConfig, preset
from explorer.data.batching import Batch, padding_fraction, token_budget_batches
from explorer.model import Transformer
from explorer.training.loss import label_smoothed_loss
from explorer.training.schedule import make_optimizer

NAME = "training"
PEAK = "matmul peak"
TITLE = "Training throughput"
MEMORY_VARIANTS = ("explorer", "nn.Transformer")

# Published dense bf16 tensor-core peaks (no sparsity), FLOP/s, by a substring of the device name.
# First match wins; an unlisted H100 variant is taken at the SXM figure (the higher peak: the lower claim).
BF16_SPEC_PEAKS = {
    "H200": 989e12,
    "H100 PCIe": 756e12,
    "H100 NVL": 835e12,
    "H100": 989e12,
    "A100": 312e12,
    "L40S": 362e12,
    "L4": 121e12,
    "A10G": 70e12,
    "RTX 4090": 165e12,
}


@dataclass
class Setup:
    config: ModelConfig
    batches: list[Batch]
    data: str
    padding: float
    device: str
    preset_name: str


def model_config(opts: Options, vocab_size: int) -> tuple[ModelConfig, str]:
    if opts.quick:
        return ModelConfig(
            vocab_size=vocab_size, d_model=64, n_heads=4, d_ff=128, n_encoder_layers=2, n_decoder_layers=2, max_len=128
        ), "quick (d_model 64, 2+2 layers)"
    name = "base" if opts.device.startswith("cuda") else "small"
    return preset(name, vocab_size=vocab_size), name


def setup(opts: Options, n_batches: int) -> Setup:
    apply_threads(opts)
    tokenizer = benchmark_tokenizer(1000 if opts.quick else 8000, quick=opts.quick)
    vocab = tokenizer.vocab_size if tokenizer is not None else (1000 if opts.quick else 8000)
    config, preset_name = model_config(opts, vocab)
    # The paper's ~25000 tokens per side on a GPU; 4000 on CPU, as the shipped model was trained.
    budget = 256 if opts.quick else 25000 if opts.device.startswith("cuda") else 4000
    pairs = 400 if opts.quick else 20000
    src, tgt, data = parallel_ids(pairs, vocab, opts.seed, tokenizer)
    limit = config.max_len - 1
    src, tgt = [s[:limit] for s in src], [t[:limit] for t in tgt]
    src_len, tgt_len = [len(s) + 1 for s in src], [len(t) + 1 for t in tgt]
    order = token_budget_batches(src_len, tgt_len, budget, shuffle=True, seed=opts.seed)
    # Cycled when the data holds fewer batches than asked (25,000-token batches of 20,000 captions: about 12):
    # a run sees each shape many times, so repeated shapes are its steady state too.
    chosen = [order[i % len(order)] for i in range(n_batches)]
    padding = padding_fraction(chosen, src_len, tgt_len)
    batches = [collate_pairs(src, tgt, b, config, opts.device) for b in chosen]
    return Setup(
        config, batches, f"{data}; batches of ≤{budget} padded tokens per side", padding, opts.device, preset_name
    )


def make_models(config: ModelConfig, device: str, seed: int) -> tuple[Transformer, TorchTransformer]:
    torch.manual_seed(seed)
    ours = Transformer(config)
    theirs = TorchTransformer(config)
    copy_weights(ours, theirs)
    return ours.to(device).train(), theirs.to(device).train()


def train_step_fn(
    model: torch.nn.Module,
    forward: Callable[[Batch], torch.Tensor],
    config: ModelConfig,
    device: str,
    optimizer: torch.optim.Optimizer | None = None,
) -> Callable[[Batch], None]:
    """One optimizer step as the trainer takes it (loss normalised by the batch's target tokens); `optimizer`
    defaults to the trainer's (`make_optimizer`)."""
    optimizer = optimizer if optimizer is not None else make_optimizer(model.parameters())
    for group in optimizer.param_groups:
        group["lr"] = 1e-4

    def step(batch: Batch) -> None:
        with autocast_for(device):
            logits = forward(batch)
        loss = label_smoothed_loss(logits, batch.tgt_out, smoothing=0.1, pad_id=config.pad_id) / batch.n_tgt_tokens
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def step_functions(
    s: Setup, seed: int, compile_model: bool = False, only: str | None = None
) -> dict[str, Callable[[Batch], None]]:
    ours, theirs = make_models(s.config, s.device, seed)
    steps = {}
    if only in (None, "explorer"):
        steps["explorer"] = train_step_fn(ours, lambda b: ours(b.src, b.tgt_in).logits, s.config, s.device)
    if only in (None, "nn.Transformer"):
        steps["nn.Transformer"] = train_step_fn(theirs, lambda b: theirs(b.src, b.tgt_in), s.config, s.device)
    if compile_model:
        compiled_model, _ = make_models(s.config, s.device, seed)
        compiled = torch.compile(compiled_model, dynamic=True)
        steps["explorer+compile"] = train_step_fn(
            compiled_model, lambda b: compiled(b.src, b.tgt_in).logits, s.config, s.device
        )
    return steps


def _on_round_batch(step: Callable[[Batch], object], batches: list[Batch]) -> Callable[[int], object]:
    """The variant of round r trains on batch r: every model sees the same batches in the same order."""
    return lambda r: step(batches[r])


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE if not opts.device.startswith("cuda") else f"{TITLE} (CUDA, bf16)")
    # On CUDA the first step of each new batch shape loads kernels and grows the allocator's pool (2 steps timed
    # after 1 warm-up measured mostly that: 3.3% of the peak); a run's steady state comes after a few
    # shapes, so CUDA warms up on 8 batches of other shapes first.
    cuda = opts.device.startswith("cuda")
    rounds, warmup = opts.n_rounds(12, 3), opts.n_warmup(8 if cuda else 2, 1)
    s = setup(opts, rounds + warmup)
    device_label = "CUDA bf16 autocast" if s.device.startswith("cuda") else f"CPU fp32, {threads_text()}"
    print(
        f"  model: {s.preset_name} {s.config.d_model}/{s.config.n_heads}h/{s.config.d_ff}, "
        f"{s.config.n_encoder_layers}+{s.config.n_decoder_layers} layers, vocab {s.config.vocab_size}; "
        f"{device_label}",
        flush=True,
    )
    print(f"  data: {s.data}; padding {s.padding:.1%}", flush=True)
    steps = step_functions(s, opts.seed, opts.compile)

    compile_seconds = 0.0
    if "explorer+compile" in steps:
        # The first calls compile (once for the first shape; dynamic=True covers the others).
        start = time.perf_counter()
        for batch in s.batches[:2]:
            steps["explorer+compile"](batch)
        synchronize(s.device)
        compile_seconds = time.perf_counter() - start

    # The matmul peak is measured before, after, and once per round between the steps, so that it sees the
    # same background load as the steps it is compared with.
    peak_dtype = torch.bfloat16 if s.device.startswith("cuda") else torch.float32
    peak_size = 512 if opts.quick else (8192 if s.device.startswith("cuda") else 2048)
    peaks = [matmul_peak(s.device, peak_dtype, peak_size, clock=opts.clock)]
    a = torch.randn(peak_size, peak_size, device=s.device, dtype=peak_dtype)
    mm_repeats = 3
    variants: dict[str, Callable[[int], object]] = {name: _on_round_batch(fn, s.batches) for name, fn in steps.items()}
    variants[PEAK] = lambda _round: [torch.mm(a, a) for _ in range(mm_repeats)]
    times = interleaved(variants, rounds=rounds, warmup=warmup, device=s.device, clock=opts.clock)
    round_peaks = [mm_repeats * 2.0 * peak_size**3 / t for t in times.pop(PEAK)]
    peaks.append(matmul_peak(s.device, peak_dtype, peak_size, clock=opts.clock))
    peak = max(peaks + round_peaks)
    recompiles: list[int] = []
    if "explorer+compile" in times:
        # A step far slower than the compiled median recompiled (a new shape): its excess is compile time,
        # and the step counts as a typical one in the rates.
        typical = statistics.median(times["explorer+compile"])
        recompiles = [i for i, t in enumerate(times["explorer+compile"]) if t > 3 * typical]
        for i in recompiles:
            compile_seconds += times["explorer+compile"][i] - typical
            times["explorer+compile"][i] = typical

    timed_batches = s.batches[warmup : warmup + rounds]
    tokens = sum(b.n_tgt_tokens for b in timed_batches)
    flops = [training_flops(s.config, b.src.shape[0], b.src.shape[1], b.tgt_in.shape[1]) for b in timed_batches]
    table = []
    for name, seconds in times.items():
        rate = tokens / sum(seconds)
        utilisation = sum(flops) / sum(seconds) / peak
        table.append((name, f"{rate:,.0f}", si(sum(flops) / sum(seconds), "FLOP/s"), f"{utilisation:.1%}"))
        result.add(f"target tokens/s, {name}", f"{rate:,.0f}")
    print_table(("model", "target tokens/s", "model FLOP/s", "of matmul peak"), table)

    ratio = paired_ratio(times["nn.Transformer"], times["explorer"])
    # Utilisation per round against that round's matmul rate: robust to load that comes and goes.
    per_round = zip(flops, times["explorer"], round_peaks, strict=True)
    round_utilisation = statistics.median(f / t / p for f, t, p in per_round)
    peak_name = "bf16" if s.device.startswith("cuda") else "fp32"
    result.add(
        "speed, explorer ÷ nn.Transformer (same batches, interleaved)", ratio_text(ratio), "≥ 1.00×", ratio >= 1.0
    )
    utilisation = sum(flops) / sum(times["explorer"]) / peak
    goal, target = ("≥ 40%", 0.40) if s.device.startswith("cuda") else ("≥ 60%", 0.60)
    result.add(
        f"explorer model FLOP/s ÷ best measured {peak_name} matmul rate ({si(peak, 'FLOP/s')})",
        f"{utilisation:.1%}",
        goal if not opts.quick else "",
        utilisation >= target if not opts.quick else None,
    )
    result.add(
        f"explorer model FLOP/s ÷ {peak_name} matmul rate of the same round (median)", f"{round_utilisation:.1%}"
    )
    print(f"  explorer ÷ nn.Transformer: {ratio_text(ratio)} (median of {rounds} paired rounds)", flush=True)
    print(
        f"  {peak_name} matmul rate ({peak_size}², torch.mm): best before/after "
        + " / ".join(si(p, "FLOP/s") for p in peaks)
        + "; per round "
        + ", ".join(si(p, "") for p in round_peaks),
        flush=True,
    )
    print(
        f"  explorer utilisation vs best peak {utilisation:.1%}, vs same-round peak {round_utilisation:.1%}", flush=True
    )
    if s.device.startswith("cuda"):
        name = torch.cuda.get_device_name(0)
        spec = next((v for k, v in BF16_SPEC_PEAKS.items() if k in name), None)
        if spec is not None:
            spec_util = sum(flops) / sum(times["explorer"]) / spec
            result.add(
                f"explorer model FLOP/s ÷ {name} spec bf16 peak ({si(spec, 'FLOP/s')})",
                f"{spec_util:.1%}",
                "≥ 40%",
                spec_util >= 0.40,
            )
    if "explorer+compile" in times:
        compiled, eager = times["explorer+compile"], times["explorer"]
        steady = [i for i in range(len(compiled)) if i not in recompiles]
        compiled_ratio = paired_ratio([eager[i] for i in steady], [compiled[i] for i in steady])
        saved = statistics.mean(eager[i] - compiled[i] for i in steady)
        payback = compile_seconds / saved if saved > 0 else float("inf")
        result.add("torch.compile: speed, compiled ÷ eager (steady state)", ratio_text(compiled_ratio))
        result.add(
            "torch.compile: compile time (first 2 steps + recompiles)",
            f"{compile_seconds:.1f} s ({len(recompiles)} recompiles during the timed steps)",
        )
        result.add(
            "torch.compile: steps to pay back compile time",
            f"{payback:,.0f}" if payback != float("inf") else "never (no faster)",
        )
        print(
            f"  torch.compile: {ratio_text(compiled_ratio)} vs eager; compile {compile_seconds:.1f} s; "
            f"pays back after {payback:,.0f} steps",
            flush=True,
        )
    result.note(
        f"{s.preset_name} model, {s.data}, padding {s.padding:.1%}; {device_label}; "
        f"{rounds} timed steps per model after {warmup} warm-up. FLOPs counted analytically "
        "(projections, QKᵀ, AV, FFN, output layer; ×3 for forward+backward)."
    )
    if opts.memory:
        memory_rows(result, NAME, MEMORY_VARIANTS, opts)
    return result


def memory_setup(opts: Options, variant: str) -> Callable[[], None]:
    s = setup(opts, 4)
    step = step_functions(s, opts.seed, only=variant)[variant]
    state = {"i": 0}

    def work() -> None:
        step(s.batches[state["i"] % len(s.batches)])
        state["i"] += 1

    return work
