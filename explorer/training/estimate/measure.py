"""Time a planned run before it starts, as its process will run it: the run's own `Trainer` (its encoding of
the corpus, its model, its batches), its `train_step` timed by `explorer.training.estimate.harness` in a thread
with the worker's torch threads and priority, one evaluation, one checkpoint, the worker's per-step checks and
progress writes, and the process's start (`explorer.training.estimate.startup`)."""

from __future__ import annotations

import functools
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch

from explorer.config import ModelConfig
from explorer.data.corpus import ParallelCorpus
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.training.estimate.harness import in_niced_thread, spread_sample, time_steps, torch_threads
from explorer.training.estimate.plan import EVAL_SAMPLE, RunCosts, RunEstimate, load_average
from explorer.training.estimate.startup import process_startup_s, worker_setup
from explorer.training.schedule import make_optimizer
from explorer.training.train_config import TrainConfig

T = TypeVar("T")


@dataclass(frozen=True)
class MeasureSettings:
    """How long a measurement may take: about `time_budget_s` of timed steps, a step over `flop_budget`
    timed on part of its rows (`harness.StepClock`), and the process start-up timed too when `startup`."""

    time_budget_s: float = 1.5
    flop_budget: float | None = None
    startup: bool = True


def estimate_run(
    config: ModelConfig,
    train_config: TrainConfig,
    tokenizer: Tokenizer,
    train: ParallelCorpus,
    val: ParallelCorpus | None = None,
    *,
    save_to: bool = False,
    settings: MeasureSettings = MeasureSettings(),
) -> RunEstimate:
    """Time the run as its process will run it (`measure_run`) and multiply by its plan: the trainer's own
    batches of `train`, with the worker's torch threads and priority, plus its evaluations, checkpoints and
    start-up. `save_to`: the run is exported to the checkpoint list when done."""
    costs = measure_run(config, train_config, tokenizer, train, val, settings=settings)
    return costs.estimate(train_config, save_to=save_to)


def measure_run(
    config: ModelConfig,
    train_config: TrainConfig,
    tokenizer: Tokenizer,
    train: ParallelCorpus,
    val: ParallelCorpus | None = None,
    *,
    settings: MeasureSettings = MeasureSettings(),
) -> RunCosts:
    """Time each part of the run `train_config` plans, as its process will run it: the trainer's own batches
    of `train` (a spread sample of epoch 0, after the run's first batches as warm-up) in a thread with the
    worker's torch threads and priority, one evaluation, one checkpoint, the process's start-up. Only
    `timing_plan(train_config)` matters: `RunCosts.estimate` applies the rest."""
    threads, nice = worker_setup()
    return in_niced_thread(
        lambda: _measure_run(config, train_config, tokenizer, train, val, settings=settings, threads=threads),
        nice if threads == 1 else 0,
    )


def clocked(work: Callable[[], T]) -> tuple[float, T]:
    """(seconds `work()` took, what it returned): every part of an estimate but the steps is timed here."""
    start = time.perf_counter()
    value = work()
    return time.perf_counter() - start, value


def timed(work: Callable[[], object]) -> float:
    return clocked(work)[0]


def _measure_run(
    config: ModelConfig,
    cfg: TrainConfig,
    tokenizer: Tokenizer,
    train: ParallelCorpus,
    val: ParallelCorpus | None,
    *,
    settings: MeasureSettings,
    threads: int | None,
) -> RunCosts:
    # The training loop is loaded only here, to be timed: planning a run never imports it.
    from explorer.checkpoint import save_checkpoint
    from explorer.training import run_folder as rf
    from explorer.training.trainer import Trainer

    with torch.enable_grad(), torch_threads(threads):
        # Adam's first construction in a process imports torch's compiler stack: process_startup_s counts
        # that for the run's process, so this process pays it untimed.
        make_optimizer([torch.nn.Parameter(torch.zeros(1))])
        # The run's start in its process: encoding the corpus, building the model and its optimizer.
        build_s, trainer = clocked(lambda: Trainer(config, cfg, tokenizer, train, val, None))
        model = trainer.model
        first_samples_s = 0.0
        if cfg.sample_sentences:  # on_start: the untrained model's attention, decoded to its length limit
            first_samples_s = timed(lambda: _decode(model, tokenizer, list(cfg.sample_sentences), attention=True))
        timing, warmup_s = time_steps(
            trainer, trainer.batches_of_epoch(0), time_budget_s=settings.time_budget_s, flop_budget=settings.flop_budget
        )
        val_loss_s = bleu_sentence_s = samples_s = 0.0
        val_sentences = len(val) if val is not None else 0
        bleu = bool(cfg.eval_every and cfg.bleu_sentences > 0 and val_sentences)
        if cfg.eval_every:
            model.eval()
            val_batches = trainer.validation_batches()
            if val_batches:
                assert trainer.val_ids is not None
                per = [
                    timed(functools.partial(trainer.validation_nll, val_batches[b]))
                    for b in spread_sample(val_batches, trainer.val_ids, 3)
                ]
                val_loss_s = float(np.mean(per)) * len(val_batches)
            if bleu and val is not None:
                sample = list(val.source[: min(val_sentences, EVAL_SAMPLE)])
                # An untrained model never stops early, so decoding to the source's length (no extra tokens)
                # times a model that writes sentences about as long as its input, as a trained one does.
                bleu_sentence_s = timed(lambda: _decode(model, tokenizer, sample, attention=False)) / len(sample)
            if cfg.sample_sentences:
                samples_s = timed(
                    lambda: _decode(model, tokenizer, list(cfg.sample_sentences), attention=True, extra=0)
                )
            model.train()
    with tempfile.TemporaryDirectory(prefix="estimate-save-") as folder:
        checkpoint_s = timed(lambda: save_checkpoint(Path(folder) / "c", model, tokenizer))
        # A rewrite with a short and with a long history: its fixed part, and what a logged step adds.
        keys = ("step", "loss", "lr", "tokens_per_s")
        short, long = 1, 5000
        short_s = timed(lambda: rf.write_json(Path(folder) / "p.json", {"history": {k: [0.0] * short for k in keys}}))
        long_s = timed(lambda: rf.write_json(Path(folder) / "p.json", {"history": {k: [0.0] * long for k in keys}}))
        entry_s = max(0.0, (long_s - short_s) / (long - short))
        stop_file = Path(folder) / "stop"
        check_s = timed(lambda: [stop_file.exists() or (Path(folder) / "requests").is_dir() for _ in range(100)]) / 100
    return RunCosts(
        step=timing,
        warmup_s=warmup_s,
        startup_s=(process_startup_s() if settings.startup else 0.0) + build_s,
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
