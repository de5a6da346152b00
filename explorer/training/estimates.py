"""What a planned run will cost and do, before it starts: its time on this machine (measured, not guessed),
the number of steps in one epoch, and the learning rate Eq. 3 will follow.

The train page shows these next to its knobs so a lecturer can size a run for the time at hand. Measuring
beats a formula: the same model trains at very different speeds on different CPUs and GPUs.

`measure_run` times a run's parts before it starts, as its process will run them: the trainer's own batches of
the corpus (their real lengths: a corpus of 5-symbol sentences steps differently from one of 25-word
sentences with the same token budget), its first steps as warm-up, its torch threads and priority, the
worker's per-step checks and progress writes, one evaluation (validation loss, BLEU, watched sentences), a
checkpoint, and the process's start (torch import). `RunCosts.estimate` multiplies them by a plan (steps,
evaluation and save intervals), so a page re-plans without timing again; `estimate_run` does both.
`python -m benchmarks.while_training --estimates` checks the estimate against real runs.

The estimate is of this machine at the moment it is measured: other work that starts or stops before the run
(another run, a class opening pages) changes the run's pace, and `RunCosts` keeps the load average it was
measured at so a page can say when that has moved.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from explorer.config import ModelConfig, count_parameters
from explorer.data.batching import Batch, collate, token_budget_batches
from explorer.data.corpus import ParallelCorpus
from explorer.devices import resolve_device
from explorer.i18n import translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.training.batches import batch_lengths, encode_pairs
from explorer.training.loss import label_smoothed_loss, token_nll
from explorer.training.schedule import make_optimizer, noam_learning_rate
from explorer.training.train_config import TrainConfig


@dataclass(frozen=True)
class StepTiming:
    """Seconds per optimizer step, from a real forward + backward + Adam step of the configured model."""

    seconds: float
    measured_tokens: int  # tokens of the largest batch timed whole
    batch_tokens: int
    device: str
    source: str = "synthetic"  # "corpus": real batches of the corpus the run will train on
    timed_batches: int = 1
    first_step_s: float | None = None  # the run's first step (warm-up), timed apart
    repeats: int = 1  # timings of each timed batch (their median counts)

    @property
    def scaled(self) -> bool:
        # A full batch is measured as whole sentences, so it may fall a sentence short of the budget.
        return self.measured_tokens < 0.9 * self.batch_tokens

    def describe(self) -> str:
        if self.source == "corpus":
            return (
                f"measured: real forward + backward + Adam steps of this model on {self.timed_batches} of the run's "
                f"own batches of this corpus ({self.batch_tokens:,} tokens each, short and long sentences alike; "
                f"the median of {self.repeats} timing{'s' if self.repeats != 1 else ''} of each) on {self.device}, "
                "after its first steps as warm-up"
                + (
                    " (batches too big to time whole: timed on part of their rows, scaled as two whole ones scale)"
                    if self.scaled
                    else ""
                )
            )
        if not self.scaled:
            return (
                f"measured: one real forward + backward + Adam step of this model on a synthetic batch of "
                f"{self.batch_tokens:,} tokens on {self.device}"
            )
        return (
            f"measured on a synthetic batch of {self.measured_tokens:,} tokens on {self.device} (a full batch "
            f"would take long to time): forward + backward scaled to {self.batch_tokens:,} tokens, plus one "
            "Adam update"
        )


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


def measure_step_time(
    config: ModelConfig,
    batch_tokens: int,
    device: str = "cpu",
    *,
    flop_budget: float | None = None,
    threads: int | None = None,
) -> StepTiming:
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
    with (
        torch.enable_grad(),
        torch_threads(threads),
        torch.random.fork_rng(devices=[target] if target.type == "cuda" else []),
    ):
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


# ---- a whole run, from the corpus it will train on ----------------------------------------------------------
EVAL_SAMPLE = 64  # validation sentences greedy-decoded to time BLEU (the trainer decodes in chunks of 64)
STARTUP_FALLBACK_S = 5.0  # a training process's start when it cannot be timed (torch import, spawn)
MAX_TIMED_STEPS = 48  # steps timed after the warm-up, at most (within `time_budget_s`)
MAX_STRATA = 16  # batches of the epoch timed, one per size stratum
REPEATS = 3  # timings of each timed batch when steps are fast (see _pace)
PROGRESS_EVERY_S = 1.0  # the worker rewrites progress.json at most once a second (explorer.training.reporter)
LOAD_CHANGED = 1.0  # a change of the load average by this much (one busy core) makes a measurement stale


def load_average() -> float | None:
    """The machine's 1-minute load average (processes running or waiting for a core); None where unknown."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def corpus_batches(
    tokenizer: Tokenizer, corpus: ParallelCorpus, batch_tokens: int, max_len: int, *, seed: int = 0, epoch: int = 0
) -> tuple[tuple[list[list[int]], list[list[int]]], list[list[int]]]:
    """The piece ids of `corpus` and the batches the trainer will draw from them in `epoch` (its cut, its
    token budget, its shuffle seed), so an estimate times what the run will train on."""
    ids = encode_pairs(tokenizer, corpus, max_len)
    batches = token_budget_batches(
        batch_lengths(ids[0]), batch_lengths(ids[1]), batch_tokens, shuffle=True, seed=seed * 100003 + epoch
    )
    return ids, batches


def padded_positions(batch: list[int], ids: tuple[list[list[int]], list[list[int]]]) -> int:
    """`batch`'s size as the token budget counts it: rows × the longer side's longest sequence, once collated
    (EOS on the source, BOS/EOS on the target)."""
    return len(batch) * max(max(len(ids[0][i]) for i in batch), max(len(ids[1][i]) for i in batch)) + len(batch)


def spread_sample(batches: list[list[int]], ids: tuple[list[list[int]], list[list[int]]], k: int) -> list[int]:
    """`k` batch numbers, one from the middle of each of k equal strata of the batches ordered by padded
    size, so their mean step time estimates the mean over the whole epoch (short and long sentences alike)."""
    order = sorted(range(len(batches)), key=lambda b: (padded_positions(batches[b], ids), b))
    k = max(1, min(k, len(order)))
    return [order[int((j + 0.5) * len(order) / k)] for j in range(k)]


def timing_plan(cfg: TrainConfig) -> TrainConfig:
    """`cfg` with what only multiplies measured costs set to one value: the run's length, its evaluation and
    save intervals, checkpoints kept, BLEU's sentence count, logging and the learning rate. Plans with the same
    timing plan share one `measure_run`, so a page can change the number of steps without timing again."""
    return dataclasses.replace(
        cfg,
        steps=1,
        warmup_steps=1,
        lr_scale=1.0,
        log_every=1,
        eval_every=1 if cfg.eval_every else 0,
        save_every=0,
        keep_last=0,
        bleu_sentences=EVAL_SAMPLE if cfg.bleu_sentences > 0 else 0,
    )


@dataclass(frozen=True)
class RunEstimate:
    """What a planned run will take on this machine, part by part (seconds)."""

    step: StepTiming  # the steady pace over real batches of the corpus
    steps: int
    warmup_s: float  # what the first steps cost beyond the steady pace (allocations, Adam's state)
    overhead_per_step_s: float  # the worker's per-step checks and its progress.json rewrites
    startup_s: float  # process start, torch import, encoding the corpus, building the model
    first_samples_s: float  # the untrained model's attention on the watched sentences (step 0)
    eval_s: float  # one evaluation: validation loss, BLEU, the watched sentences, the best/ save
    bleu_s: float  # of which greedy BLEU decoding
    evals: int
    save_s: float  # one periodic save (latest/ with Adam's moments, and a numbered copy)
    saves: int
    final_s: float  # the last latest/ save (and the export to the checkpoint list)

    @property
    def training_s(self) -> float:
        """Training steps only: steady pace, warm-up and the worker's per-step overheads."""
        return self.steps * (self.step.seconds + self.overhead_per_step_s) + self.warmup_s

    @property
    def extras_s(self) -> float:
        return self.first_samples_s + self.evals * self.eval_s + self.saves * self.save_s + self.final_s

    @property
    def total_s(self) -> float:
        """From Start until the run has finished and saved."""
        return self.startup_s + self.training_s + self.extras_s

    def parts(self, lang: str = "en") -> list[str]:
        """One line per part of the total, in `lang`."""
        step = self.step
        fields = dict(
            steps=f"{self.steps:,}",
            ms=f"{step.seconds * 1000:,.1f}",
            batches=step.timed_batches,
            repeats=step.repeats,
            device=step.device,
        )
        if step.repeats > 1:
            training = translate(
                "training: {steps} steps × {ms} ms (the median of {repeats} timings of each of {batches} of the "
                "run's own batches of this corpus, on {device}, with the run's threads and priority)",
                lang,
                **fields,
            )
        else:
            training = translate(
                "training: {steps} steps × {ms} ms (timed on {batches} of the run's own batches of this corpus, "
                "on {device}, with the run's threads and priority)",
                lang,
                **fields,
            )
        found = [training]
        if self.warmup_s >= 0.05:
            found.append(translate("the first steps' warm-up: {s} s", lang, s=f"{self.warmup_s:.1f}"))
        if self.evals and self.bleu_s:
            found.append(
                translate(
                    "evaluations: {n} × {s} s (greedy BLEU decoding {bleu} s of each)",
                    lang,
                    n=self.evals,
                    s=f"{self.eval_s:.1f}",
                    bleu=f"{self.bleu_s:.1f}",
                )
            )
        elif self.evals:
            found.append(translate("evaluations: {n} × {s} s", lang, n=self.evals, s=f"{self.eval_s:.1f}"))
        if self.saves:
            found.append(translate("checkpoints: {n} × {s} s", lang, n=self.saves, s=f"{self.save_s:.1f}"))
        found.append(
            translate(
                "the watched sentences at step 0 and the final save: {s} s",
                lang,
                s=f"{self.first_samples_s + self.final_s:.1f}",
            )
        )
        found.append(
            translate(
                "start-up: {s} s (a new process, torch, encoding the corpus, building the model)",
                lang,
                s=f"{self.startup_s:.1f}",
            )
        )
        return found

    def describe(self, lang: str = "en") -> str:
        return "; ".join(self.parts(lang))


@dataclass(frozen=True)
class RunCosts:
    """What each part of a run costs on this machine, timed once by `measure_run` (seconds). A plan (its
    steps, evaluation and save intervals, BLEU sentences) multiplies them into a `RunEstimate`."""

    step: StepTiming
    warmup_s: float
    startup_s: float
    check_s: float  # the worker's stop and request checks, each step
    progress_s: float  # one progress.json rewrite, its history aside
    progress_entry_s: float  # what each logged step in its history adds to a rewrite
    checkpoint_s: float  # the model and tokenizer written once
    first_samples_s: float
    val_loss_s: float  # validation loss over the whole validation set
    bleu_sentence_s: float  # greedy decoding of one validation sentence
    val_sentences: int
    samples_s: float  # the watched sentences at an evaluation
    evaluations: bool  # timed with evaluations (validation loss, BLEU when asked, the watched sentences)
    bleu: bool
    load_average: float | None = None  # the machine's, when the timing ended
    measured_at: float = 0.0  # time.time()

    def estimate(self, cfg: TrainConfig, *, save_to: bool = False) -> RunEstimate:
        """The run `cfg` plans (`save_to`: exported to the checkpoint list when done), from these costs; `cfg`
        must have the `timing_plan` these were measured with."""
        if cfg.eval_every and not self.evaluations:
            raise ValueError("these costs were measured without evaluations; measure with the plan's timing_plan")
        with_bleu = bool(cfg.eval_every and cfg.bleu_sentences > 0 and self.val_sentences)
        if with_bleu and not self.bleu:
            raise ValueError("these costs were measured without BLEU; measure with the plan's timing_plan")
        steps = cfg.steps
        evals = -(-steps // cfg.eval_every) if cfg.eval_every else 0  # each eval_every steps, and at the end
        progress_s = self.progress_s + self.progress_entry_s * max(1, steps // max(cfg.log_every, 1))
        bleu_s = self.bleu_sentence_s * min(cfg.bleu_sentences, self.val_sentences) if with_bleu else 0.0
        eval_s = 0.0
        if evals:
            eval_s = self.val_loss_s + bleu_s + self.samples_s
            if with_bleu:
                eval_s += self.checkpoint_s + progress_s  # best/ (when BLEU rose) and progress.json
        with_adam = 3 * self.checkpoint_s  # the model plus Adam's two moments, as big as the model each
        saves = steps // cfg.save_every if cfg.save_every else 0
        keep = 1 if cfg.keep_last else 0
        save_s = with_adam + keep * self.checkpoint_s + progress_s * (1 + keep)
        final_s = with_adam + progress_s * 2 + (self.checkpoint_s if save_to else 0.0)
        # progress.json is rewritten at most once a second, so a fast step pays a fraction of a rewrite.
        overhead = self.check_s + progress_s * min(1.0, self.step.seconds / PROGRESS_EVERY_S)
        return RunEstimate(
            self.step,
            steps,
            self.warmup_s,
            overhead,
            self.startup_s,
            self.first_samples_s,
            eval_s,
            bleu_s,
            evals,
            save_s,
            saves,
            final_s,
        )

    def stale(self, load_now: float | None) -> bool:
        """Whether the machine's load has moved by a busy core or more since these were measured."""
        if load_now is None or self.load_average is None:
            return False
        return abs(load_now - self.load_average) >= LOAD_CHANGED


def _worker_setup() -> tuple[int, int]:
    from explorer.training.worker import DEFAULT_NICE, default_threads

    return default_threads(), DEFAULT_NICE


STARTUP_MAX_AGE_S = 10 * 60  # a process start-up timed longer ago than this is timed again (the load moves)
_startup: dict[str, float] = {}  # "seconds" and "at" (time.monotonic()) of the last timing
_startup_lock = threading.Lock()


def forget_process_startup() -> None:
    """Time the next training process's start-up afresh (the machine's load has moved)."""
    with _startup_lock:
        _startup.clear()


def process_startup_s() -> float:
    """Seconds a training process takes to start and import torch and the training loop, timed in a child
    started as the launcher starts one (its priority and threads); kept for `STARTUP_MAX_AGE_S`, since each
    timing costs a torch import."""
    with _startup_lock:
        if _startup and time.monotonic() - _startup["at"] < STARTUP_MAX_AGE_S:
            return _startup["seconds"]
        seconds = _time_process_startup()
        _startup.update(seconds=seconds, at=time.monotonic())
        return seconds


def _time_process_startup() -> float:
    threads, nice = _worker_setup()
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": "PASSIVE"}
    # What the worker loads before its first step: torch, the loop and its reporter, and Adam, whose first
    # construction imports torch's compiler stack (seconds), then what its first evaluation imports.
    code = (
        "import torch, explorer.training.trainer, explorer.training.reporter, explorer.checkpoint, "
        "explorer.inference, explorer.evaluation; p = torch.nn.Parameter(torch.zeros(2)); "
        "o = torch.optim.Adam([p]); p.sum().backward(); o.step()"
    )
    start = time.perf_counter()
    try:
        subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            check=True,
            timeout=120,
            preexec_fn=(lambda: os.nice(nice)) if nice else None,  # noqa: PLW1509 - no threads started
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return STARTUP_FALLBACK_S
    return time.perf_counter() - start


def estimate_run(
    config: ModelConfig,
    train_config: TrainConfig,
    tokenizer: Tokenizer,
    train: ParallelCorpus,
    val: ParallelCorpus | None = None,
    *,
    save_to: bool = False,
    time_budget_s: float = 1.5,
    flop_budget: float | None = None,
    startup: bool = True,
) -> RunEstimate:
    """Time the run as its process will run it (`measure_run`) and multiply by its plan: the trainer's own
    batches of `train`, with the worker's torch threads and priority, plus its evaluations, checkpoints and
    start-up. `save_to`: the run is exported to the checkpoint list when done."""
    costs = measure_run(
        config,
        train_config,
        tokenizer,
        train,
        val,
        time_budget_s=time_budget_s,
        flop_budget=flop_budget,
        startup=startup,
    )
    return costs.estimate(train_config, save_to=save_to)


def measure_run(
    config: ModelConfig,
    train_config: TrainConfig,
    tokenizer: Tokenizer,
    train: ParallelCorpus,
    val: ParallelCorpus | None = None,
    *,
    time_budget_s: float = 1.5,
    flop_budget: float | None = None,
    startup: bool = True,
) -> RunCosts:
    """Time each part of the run `train_config` plans, as its process will run it: the trainer's own batches
    of `train` (a spread sample of epoch 0, after the run's first batches as warm-up) in a thread with the
    worker's torch threads and priority, one evaluation, one checkpoint, the process's start-up. Only
    `timing_plan(train_config)` matters: `RunCosts.estimate` applies the rest."""
    threads, nice = _worker_setup()
    return in_niced_thread(
        lambda: _measure_run(
            config,
            train_config,
            tokenizer,
            train,
            val,
            time_budget_s=time_budget_s,
            flop_budget=flop_budget,
            threads=threads,
            startup=startup,
        ),
        nice if threads == 1 else 0,
    )


def _pace(
    stepper: _Stepper,
    batches: list[list[int]],
    ids: tuple[list[list[int]], list[list[int]]],
    chosen: list[int],
    repeats: int,
    calibration: float,
) -> float:
    """Seconds per step over the epoch: the mean over the `chosen` size strata of each batch's median timing.

    Each batch is timed `repeats` times, round by round, so a burst of other work on the machine lands in one
    round and the median drops it; the mean over strata keeps what short and long batches each cost. Slow steps
    are timed once: a burst shorter than a step only adds a fraction of it.
    """
    rounds = [
        [stepper.step(batches[b], ids) * (calibration if stepper.too_big(batches[b], ids) else 1.0) for b in chosen]
        for _ in range(repeats)
    ]
    return float(np.mean(np.median(np.asarray(rounds), axis=0)))


def _measure_run(
    config: ModelConfig,
    cfg: TrainConfig,
    tokenizer: Tokenizer,
    train: ParallelCorpus,
    val: ParallelCorpus | None,
    *,
    time_budget_s: float,
    flop_budget: float | None,
    threads: int | None,
    startup: bool,
) -> RunCosts:
    from explorer.checkpoint import save_checkpoint
    from explorer.training import run_folder as rf

    target = resolve_device(cfg.device)
    encode_s, (ids, batches) = _clocked(
        lambda: corpus_batches(tokenizer, train, cfg.batch_tokens, cfg.max_len, seed=cfg.seed)
    )
    val_ids = encode_pairs(tokenizer, val, cfg.max_len) if val is not None and len(val) else None
    with (
        torch.enable_grad(),
        torch_threads(threads),
        torch.random.fork_rng(devices=[target] if target.type == "cuda" else []),
    ):
        torch.manual_seed(cfg.seed)
        # Adam's first construction in a process imports torch's compiler stack: process_startup_s counts
        # that for the run's process, so this process pays it untimed.
        make_optimizer([torch.nn.Parameter(torch.zeros(1))])
        build_s, (model, optimizer) = _clocked(lambda: _build(config, cfg, target))
        stepper = _Stepper(model, optimizer, config, cfg, target, flop_budget)
        first_samples_s = 0.0
        if cfg.sample_sentences:  # on_start: the untrained model's attention, decoded to its length limit
            first_samples_s = _timed(lambda: _decode(model, tokenizer, list(cfg.sample_sentences), attention=True))
        # Warm-up: the run's own first two batches, timed whole (what they cost beyond the pace is added once).
        first = [stepper.step(batches[b % len(batches)], ids, whole=True) for b in range(2)]
        pace = first[-1]
        # A batch too costly to time whole is timed on part of its rows and scaled; the second batch, timed both
        # ways, calibrates that scaling (a small batch uses the CPU less well per token than a full one).
        calibration = 1.0
        if stepper.too_big(batches[1 % len(batches)], ids):
            # Once more whole, now that its shapes have been allocated for, then on part of its rows.
            pace = stepper.step(batches[1 % len(batches)], ids, whole=True)
            calibration = pace / stepper.step(batches[1 % len(batches)], ids)
        affordable = max(3, min(MAX_TIMED_STEPS, int(time_budget_s / max(pace, 1e-3))))
        repeats = REPEATS if affordable >= 3 * REPEATS else 1
        chosen = spread_sample(batches, ids, min(MAX_STRATA, max(3, affordable // repeats)))
        seconds = _pace(stepper, batches, ids, chosen, repeats, calibration)
        warmup_s = max(0.0, sum(first) - len(first) * seconds)
        val_loss_s = bleu_sentence_s = samples_s = 0.0
        val_sentences = len(val) if val is not None else 0
        bleu = bool(cfg.eval_every and cfg.bleu_sentences > 0 and val_sentences)
        if cfg.eval_every:
            model.eval()
            if val_ids is not None:
                val_batches = token_budget_batches(
                    batch_lengths(val_ids[0]), batch_lengths(val_ids[1]), cfg.batch_tokens, shuffle=False, seed=0
                )
                per = [
                    _timed(functools.partial(stepper.forward, val_batches[b], val_ids))
                    for b in spread_sample(val_batches, val_ids, 3)
                ]
                val_loss_s = float(np.mean(per)) * len(val_batches)
            if bleu and val is not None:
                sample = list(val.source[: min(val_sentences, EVAL_SAMPLE)])
                # An untrained model never stops early, so decoding to the source's length (no extra tokens)
                # times a model that writes sentences about as long as its input, as a trained one does.
                bleu_sentence_s = _timed(lambda: _decode(model, tokenizer, sample, attention=False)) / len(sample)
            if cfg.sample_sentences:
                samples_s = _timed(
                    lambda: _decode(model, tokenizer, list(cfg.sample_sentences), attention=True, extra=0)
                )
            model.train()
    with tempfile.TemporaryDirectory(prefix="estimate-save-") as folder:
        checkpoint_s = _timed(lambda: save_checkpoint(Path(folder) / "c", model, tokenizer))
        # A rewrite with a short and with a long history: its fixed part, and what a logged step adds.
        keys = ("step", "loss", "lr", "tokens_per_s")
        short, long = 1, 5000
        short_s = _timed(lambda: rf.write_json(Path(folder) / "p.json", {"history": {k: [0.0] * short for k in keys}}))
        long_s = _timed(lambda: rf.write_json(Path(folder) / "p.json", {"history": {k: [0.0] * long for k in keys}}))
        entry_s = max(0.0, (long_s - short_s) / (long - short))
        stop_file = Path(folder) / "stop"
        check_s = _timed(lambda: [stop_file.exists() or (Path(folder) / "requests").is_dir() for _ in range(100)]) / 100
    startup_s = (process_startup_s() if startup else 0.0) + encode_s + build_s
    timing = StepTiming(
        seconds,
        stepper.partial_tokens or stepper.measured_tokens,
        cfg.batch_tokens,
        str(target),
        source="corpus",
        timed_batches=len(chosen),
        first_step_s=first[0] if first else None,
        repeats=repeats,
    )
    return RunCosts(
        step=timing,
        warmup_s=warmup_s,
        startup_s=startup_s,
        check_s=check_s,
        progress_s=max(0.0, short_s - entry_s * short),
        progress_entry_s=entry_s,
        checkpoint_s=checkpoint_s,
        first_samples_s=first_samples_s,
        val_loss_s=val_loss_s,
        bleu_sentence_s=bleu_sentence_s,
        val_sentences=val_sentences,
        samples_s=samples_s,
        evaluations=bool(cfg.eval_every),
        bleu=bleu,
        load_average=load_average(),
        measured_at=time.time(),
    )


def _build(config: ModelConfig, cfg: TrainConfig, target: torch.device) -> tuple[Transformer, torch.optim.Optimizer]:
    model = Transformer(config).to(target).train()
    return model, make_optimizer(model.parameters(), (cfg.adam_beta1, cfg.adam_beta2), cfg.adam_eps)


def _clocked(work: Callable[[], T]) -> tuple[float, T]:
    """(seconds `work()` took, what it returned): every part of an estimate is timed through here."""
    start = time.perf_counter()
    value = work()
    return time.perf_counter() - start, value


def _timed(work: Callable[[], object]) -> float:
    return _clocked(work)[0]


def _decode(
    model: Transformer, tokenizer: Tokenizer, sentences: list[str], *, attention: bool, extra: int | None = None
) -> None:
    from explorer.inference import EXTRA_OUTPUT_TOKENS, translate

    if sentences:
        with torch.inference_mode():
            translate(
                model,
                tokenizer,
                sentences,
                batch_size=64,
                with_attention=attention,
                max_extra_tokens=(0 if not attention else EXTRA_OUTPUT_TOKENS) if extra is None else extra,
            )


class _Stepper:
    """One training step as the trainer takes it (its RNG swap, learning rate, loss and Adam update), on a
    batch of corpus indices; a batch too costly to time whole is timed at two smaller row counts and the
    forward + backward extrapolated to its size (the fixed part apart), plus one Adam update."""

    def __init__(
        self,
        model: Transformer,
        optimizer: torch.optim.Optimizer,
        config: ModelConfig,
        cfg: TrainConfig,
        target: torch.device,
        flop_budget: float | None,
    ) -> None:
        self.model, self.optimizer, self.config, self.cfg, self.target = model, optimizer, config, cfg, target
        budget = flop_budget if flop_budget is not None else (2e13 if target.type == "cuda" else 1e11)
        self.affordable = max(1, int(budget / (6 * count_parameters(config))))  # ≈ 6 · parameters FLOPs a token
        self.precision = torch.autocast("cuda", dtype=torch.bfloat16) if target.type == "cuda" else None
        self.generator = torch.Generator().manual_seed(cfg.seed)
        self.count, self.measured_tokens, self.partial_tokens = 0, 0, 0

    def collate(self, rows: list[int], ids: tuple[list[list[int]], list[list[int]]]) -> Batch:
        c = self.config
        return collate(
            [ids[0][i] + [c.eos_id] for i in rows],
            [ids[1][i] for i in rows],
            pad_id=c.pad_id,
            bos_id=c.bos_id,
            eos_id=c.eos_id,
        ).to(self.target)

    def sync(self) -> float:
        if self.target.type == "cuda":
            torch.cuda.synchronize(self.target)
        return time.perf_counter()

    def forward_backward(self, batch: Batch) -> float:
        start = self.sync()
        self.count += 1
        lr = noam_learning_rate(self.count, self.config.d_model, self.cfg.warmup_steps, self.cfg.lr_scale)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        with torch.random.fork_rng(devices=[]):  # the trainer swaps its run's RNG state in around each step
            torch.set_rng_state(self.generator.get_state())
            with self.precision if self.precision is not None else nullcontext():
                logits = self.model(batch.src, batch.tgt_in).logits
            loss_sum = label_smoothed_loss(
                logits, batch.tgt_out, smoothing=self.cfg.label_smoothing, pad_id=self.config.pad_id
            )
            loss = loss_sum / batch.n_tgt_tokens
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.generator.set_state(torch.get_rng_state())
        if self.count % max(self.cfg.log_every, 1) == 0:
            float(loss_sum.detach() / batch.n_tgt_tokens)
        return self.sync() - start

    def update(self) -> float:
        start = self.sync()
        self.optimizer.step()
        return self.sync() - start

    def too_big(self, rows: list[int], ids: tuple[list[list[int]], list[list[int]]]) -> bool:
        return padded_positions(rows, ids) > self.affordable and len(rows) > 1

    def step(self, rows: list[int], ids: tuple[list[list[int]], list[list[int]]], *, whole: bool = False) -> float:
        """Seconds of one step on the batch `rows`; a batch `too_big` to time whole (unless `whole`) is timed
        on as many of its rows as the budget allows, its forward + backward scaled to all of them."""
        start = time.perf_counter()
        if whole or not self.too_big(rows, ids):
            self.forward_backward(self.collate(rows, ids))
            self.update()
            self.measured_tokens = max(self.measured_tokens, padded_positions(rows, ids))
            return time.perf_counter() - start
        part = rows[: max(1, int(self.affordable * len(rows) / padded_positions(rows, ids)))]
        self.partial_tokens = max(self.partial_tokens, padded_positions(part, ids))
        forward_backward = self.forward_backward(self.collate(part, ids))
        return forward_backward * len(rows) / len(part) + self.update()

    @torch.inference_mode()
    def forward(self, rows: list[int], ids: tuple[list[list[int]], list[list[int]]]) -> float:
        batch = self.collate(rows, ids)
        logits = self.model(batch.src, batch.tgt_in).logits
        return float(token_nll(logits, batch.tgt_out, pad_id=self.config.pad_id))


def planned_schedule(
    steps: int, d_model: int, warmup_steps: int, scale: float = 1.0, points: int = 300
) -> tuple[list[int], list[float]]:
    """The learning rate Eq. 3 will use over the whole run, at about 2·`points` steps: spread over the run and
    again over its first five warm-ups, where the rate turns (the warm-up's end itself included)."""
    whole = np.linspace(1, max(steps, 1), points)
    early = np.linspace(1, max(min(steps, 5 * warmup_steps), 1), points)
    grid = sorted({int(round(x)) for x in np.concatenate([whole, early])} | {min(warmup_steps, steps)})
    return grid, [noam_learning_rate(s, d_model, warmup_steps, scale) for s in grid]
