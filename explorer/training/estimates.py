"""What a planned run will cost and do, before it starts: the time per optimizer step (measured, not guessed),
the number of steps in one epoch, and the learning rate Eq. 3 will follow.

The train page shows these next to its knobs so a lecturer can size a run for the time at hand. Measuring
beats a formula: the same model trains at very different speeds on different CPUs and GPUs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch

from explorer.config import ModelConfig, count_parameters
from explorer.data.batching import token_budget_batches
from explorer.data.corpus import ParallelCorpus
from explorer.devices import resolve_device
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.training.batches import batch_lengths, encode_pairs
from explorer.training.loss import label_smoothed_loss
from explorer.training.schedule import make_optimizer, noam_learning_rate


@dataclass(frozen=True)
class StepTiming:
    """Seconds per optimizer step, from a real forward + backward + Adam step of the configured model."""

    seconds: float
    measured_tokens: int  # target tokens of the timed synthetic batch
    batch_tokens: int
    device: str

    @property
    def scaled(self) -> bool:
        # A full batch is measured as whole sentences, so it may fall a sentence short of the budget.
        return self.measured_tokens < 0.9 * self.batch_tokens

    def describe(self) -> str:
        if not self.scaled:
            return (f"measured: one real forward + backward + Adam step of this model on a synthetic batch of "
                    f"{self.batch_tokens:,} tokens on {self.device}")
        return (f"measured on a synthetic batch of {self.measured_tokens:,} tokens on {self.device} (a full batch "
                f"would take long to time): forward + backward scaled to {self.batch_tokens:,} tokens, plus one "
                "Adam update")


_THREADS_LOCK = threading.Lock()
T = TypeVar("T")


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with `n` torch threads (None: as they are), then restore the count. The count is one per
    process, so a page that times a step this way briefly lends its other requests the same count."""
    if n is None or n == torch.get_num_threads():
        yield
        return
    with _THREADS_LOCK:
        before = torch.get_num_threads()
        torch.set_num_threads(n)
        try:
            yield
        finally:
            torch.set_num_threads(before)


def in_niced_thread(work: Callable[[], T], nice: int) -> T:
    """`work()` in a short-lived thread that lowers its own priority by `nice` first (Linux gives each thread
    its own niceness; with one torch thread, ops run on the calling thread). A step timed this way competes
    for the CPU as a training process does (explorer.training.worker renices itself), and the caller's
    priority is never touched."""
    found: dict[str, Any] = {}

    def target() -> None:
        try:
            if nice and hasattr(os, "setpriority") and hasattr(threading, "get_native_id"):
                me = threading.get_native_id()
                os.setpriority(os.PRIO_PROCESS, me, os.getpriority(os.PRIO_PROCESS, me) + nice)
            found["value"] = work()
        except BaseException as error:  # handed back to the caller
            found["error"] = error

    thread = threading.Thread(target=target, name="step-timing", daemon=True)
    thread.start()
    thread.join()
    if "error" in found:
        raise found["error"]
    return found["value"]


def measure_like_a_run(config: ModelConfig, batch_tokens: int, device: str = "cpu") -> StepTiming:
    """`measure_step_time` as a training process will step: its number of torch threads and its priority."""
    from explorer.training.worker import DEFAULT_NICE, default_threads

    threads = default_threads()
    return in_niced_thread(lambda: measure_step_time(config, batch_tokens, device, threads=threads),
                           DEFAULT_NICE if threads == 1 else 0)  # the pool's other threads could not be reniced


def measure_step_time(config: ModelConfig, batch_tokens: int, device: str = "cpu", *,
                      flop_budget: float | None = None, threads: int | None = None) -> StepTiming:
    """Time real training steps of `Transformer(config)` on random tokens (after one untimed warm-up step).

    When a full batch would cost more than `flop_budget` (≈ 6 · parameters · tokens; default 3e10 on a CPU,
    2e13 on a GPU) a smaller batch is timed instead: its forward + backward time is scaled linearly to
    `batch_tokens` and the Adam update, whose cost does not depend on the batch, is added once.
    """
    target = resolve_device(device)
    budget = flop_budget if flop_budget is not None else (2e13 if target.type == "cuda" else 3e10)
    length = max(2, min(24, config.max_len - 1))
    affordable = int(budget / (6 * count_parameters(config)))
    tokens = max(length, min(batch_tokens, affordable))
    rows = max(1, tokens // length)
    # `threads`: the count a training process will use (explorer.training.worker), so the time is its pace.
    with torch.enable_grad(), torch_threads(threads), \
            torch.random.fork_rng(devices=[target] if target.type == "cuda" else []):
        torch.manual_seed(0)
        model = Transformer(config).to(target).train()
        optimizer = make_optimizer(model.parameters())
        precision = torch.autocast("cuda", dtype=torch.bfloat16) if target.type == "cuda" else nullcontext()
        low = 4 if config.vocab_size > 4 else 0
        batch = torch.randint(low, config.vocab_size, (rows, length), device=target)

        def sync() -> float:
            if target.type == "cuda":
                torch.cuda.synchronize(target)
            return time.perf_counter()

        def step() -> tuple[float, float]:
            start = sync()
            with precision:  # bfloat16 on a GPU, as the trainer runs there
                logits = model(batch, batch).logits
            loss = label_smoothed_loss(logits, batch, smoothing=0.1, pad_id=config.pad_id) / batch.numel()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            middle = sync()
            optimizer.step()
            return middle - start, sync() - middle

        step()  # warm-up: allocations, kernel selection, Adam's state
        # The fastest of up to three steps (while they take under a second in all): other work on the
        # machine only ever slows a step down.
        timings = [step()]
        while len(timings) < 3 and sum(a + b for a, b in timings) < 1.0:
            timings.append(step())
        forward_backward, update = min(timings, key=lambda t: t[0] + t[1])
    measured = rows * length
    seconds = forward_backward * max(batch_tokens, measured) / measured + update
    return StepTiming(seconds, measured, batch_tokens, str(target))


def batches_per_epoch(tokenizer: Tokenizer, corpus: ParallelCorpus, batch_tokens: int, max_len: int) -> int:
    """How many of the trainer's token-budget batches one pass over `corpus` takes (its own lengths and cut)."""
    src, tgt = encode_pairs(tokenizer, corpus, max_len)
    return len(token_budget_batches(batch_lengths(src), batch_lengths(tgt), batch_tokens, shuffle=False, seed=0))


def planned_schedule(steps: int, d_model: int, warmup_steps: int, scale: float = 1.0,
                     points: int = 300) -> tuple[list[int], list[float]]:
    """The learning rate Eq. 3 will use over the whole run, at about 2·`points` steps: spread over the run and
    again over its first five warm-ups, where the rate turns (the warm-up's end itself included)."""
    whole = np.linspace(1, max(steps, 1), points)
    early = np.linspace(1, max(min(steps, 5 * warmup_steps), 1), points)
    grid = sorted({int(round(x)) for x in np.concatenate([whole, early])} | {min(warmup_steps, steps)})
    return grid, [noam_learning_rate(s, d_model, warmup_steps, scale) for s in grid]


