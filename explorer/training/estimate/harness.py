"""How a run's steps are timed before it starts: the trainer's own `train_step` on a spread sample of its own
batches, with the worker's torch threads and priority, the median of repeated timings, and batches too
costly to time whole timed on part of their rows and scaled."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import torch

from explorer.config import count_parameters
from explorer.training.estimate.plan import StepTiming

if TYPE_CHECKING:
    from explorer.training.trainer import Trainer

MAX_TIMED_STEPS = 48  # steps timed after the warm-up, at most (within the time budget)
MAX_STRATA = 16  # batches of the epoch timed, one per size stratum
REPEATS = 3  # timings of each timed batch when steps are fast (see `pace`)

_THREADS_LOCK = threading.Lock()
T = TypeVar("T")
Ids = tuple[list[list[int]], list[list[int]]]


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


def padded_positions(batch: list[int], ids: Ids) -> int:
    """`batch`'s size as the token budget counts it: rows × the longer side's longest sequence, once collated
    (EOS on the source, BOS/EOS on the target)."""
    return len(batch) * max(max(len(ids[0][i]) for i in batch), max(len(ids[1][i]) for i in batch)) + len(batch)


def spread_sample(batches: list[list[int]], ids: Ids, k: int) -> list[int]:
    """`k` batch numbers, one from the middle of each of k equal strata of the batches ordered by padded
    size, so their mean step time estimates the mean over the whole epoch (short and long sentences alike)."""
    order = sorted(range(len(batches)), key=lambda b: (padded_positions(batches[b], ids), b))
    k = max(1, min(k, len(order)))
    return [order[int((j + 0.5) * len(order) / k)] for j in range(k)]


class StepClock:
    """Seconds of the trainer's own `train_step` on a batch of its training pairs. A batch too costly to time
    whole (over `flop_budget` ≈ 6 · parameters · padded tokens; default 1e11 on a CPU, 2e13 on a GPU) is timed
    on as many of its rows as the budget allows: `train_step`'s forward + backward scaled to all of its rows,
    plus its Adam update once (whose cost does not depend on the batch)."""

    def __init__(self, trainer: Trainer, flop_budget: float | None = None) -> None:
        self.trainer = trainer
        budget = flop_budget if flop_budget is not None else (2e13 if trainer.device.type == "cuda" else 1e11)
        self.affordable = max(1, int(budget / (6 * count_parameters(trainer.model_config))))
        self.measured_tokens, self.partial_tokens = 0, 0

    def sync(self) -> float:
        if self.trainer.device.type == "cuda":
            torch.cuda.synchronize(self.trainer.device)
        return time.perf_counter()

    def too_big(self, rows: list[int]) -> bool:
        return padded_positions(rows, self.trainer.train_ids) > self.affordable and len(rows) > 1

    def step(self, rows: list[int], *, whole: bool = False) -> float:
        """Seconds of one step on the batch `rows` (indices of the trainer's training pairs), collating it
        included; a batch `too_big` to time whole (unless `whole`) is timed on part of its rows and scaled."""
        trainer, ids = self.trainer, self.trainer.train_ids
        if whole or not self.too_big(rows):
            start = self.sync()
            trainer.train_step(trainer.make_batch(rows, ids))
            self.measured_tokens = max(self.measured_tokens, padded_positions(rows, ids))
            return self.sync() - start
        part = rows[: max(1, int(self.affordable * len(rows) / padded_positions(rows, ids)))]
        self.partial_tokens = max(self.partial_tokens, padded_positions(part, ids))
        batch = trainer.make_batch(part, ids)
        start = self.sync()
        trainer.forward_backward(batch)  # train_step's two parts, timed apart
        middle = self.sync()
        trainer.update()
        return (middle - start) * len(rows) / len(part) + self.sync() - middle


def pace(clock: StepClock, batches: list[list[int]], chosen: list[int], repeats: int, calibration: float) -> float:
    """Seconds per step over the epoch: the mean over the `chosen` size strata of each batch's median timing.

    Each batch is timed `repeats` times, round by round, so a burst of other work on the machine lands in one
    round and the median drops it; the mean over strata keeps what short and long batches each cost. Slow steps
    are timed once: a burst shorter than a step only adds a fraction of it.
    """
    rounds = [
        [clock.step(batches[b]) * (calibration if clock.too_big(batches[b]) else 1.0) for b in chosen]
        for _ in range(repeats)
    ]
    return float(np.mean(np.median(np.asarray(rounds), axis=0)))


def time_steps(
    trainer: Trainer, batches: list[list[int]], *, time_budget_s: float, flop_budget: float | None = None
) -> tuple[StepTiming, float]:
    """(the steady pace of `trainer`'s steps over `batches`, what its first steps cost beyond it), timed in
    about `time_budget_s`: the run's own first two batches as warm-up, then a spread sample of the epoch."""
    clock = StepClock(trainer, flop_budget)
    # Warm-up: the run's own first two batches, timed whole (what they cost beyond the pace is added once).
    first = [clock.step(batches[b % len(batches)], whole=True) for b in range(2)]
    seconds = first[-1]
    # A batch too costly to time whole is timed on part of its rows and scaled; the second batch, timed both
    # ways, calibrates that scaling (a small batch uses the CPU less well per token than a full one).
    calibration = 1.0
    second = batches[1 % len(batches)]
    if clock.too_big(second):
        # Once more whole, now that its shapes have been allocated for, then on part of its rows.
        seconds = clock.step(second, whole=True)
        calibration = seconds / clock.step(second)
    affordable = max(3, min(MAX_TIMED_STEPS, int(time_budget_s / max(seconds, 1e-3))))
    repeats = REPEATS if affordable >= 3 * REPEATS else 1
    chosen = spread_sample(batches, trainer.train_ids, min(MAX_STRATA, max(3, affordable // repeats)))
    seconds = pace(clock, batches, chosen, repeats, calibration)
    timing = StepTiming(
        seconds,
        clock.partial_tokens or clock.measured_tokens,
        trainer.config.batch_tokens,
        str(trainer.device),
        timed_batches=len(chosen),
        first_step_s=first[0],
        repeats=repeats,
    )
    return timing, max(0.0, sum(first) - len(first) * seconds)
