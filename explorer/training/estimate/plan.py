"""A run's plan times its measured costs: `RunCosts` (what each part costs on this machine, timed once by
`explorer.training.estimate.measure`) and `RunEstimate` (a plan's total, part by part), plus what a plan
shows before anything is timed: steps per epoch and the learning rate Eq. 3 will follow. No timing here."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import numpy as np

from explorer.data.batching import token_budget_batches
from explorer.data.corpus import ParallelCorpus
from explorer.tokenizer import Tokenizer
from explorer.training.batches import batch_lengths, encode_pairs
from explorer.training.schedule import noam_learning_rate
from explorer.training.train_config import TrainConfig

EVAL_SAMPLE = 64  # validation sentences greedy-decoded to time BLEU (the trainer decodes in chunks of 64)
PROGRESS_EVERY_S = 1.0  # the worker rewrites progress.json at most once a second (explorer.training.reporter)
LOAD_CHANGED = 1.0  # a change of the load average by this much (one busy core) makes a measurement stale


def load_average() -> float | None:
    """The machine's 1-minute load average (processes running or waiting for a core); None where unknown."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def batches_per_epoch(tokenizer: Tokenizer, corpus: ParallelCorpus, batch_tokens: int, max_len: int) -> int:
    """How many of the trainer's token-budget batches one pass over `corpus` takes (its own lengths and cut)."""
    src, tgt = encode_pairs(tokenizer, corpus, max_len)
    return len(token_budget_batches(batch_lengths(src), batch_lengths(tgt), batch_tokens, shuffle=False, seed=0))


def planned_schedule(
    steps: int, d_model: int, warmup_steps: int, scale: float = 1.0, points: int = 300
) -> tuple[list[int], list[float]]:
    """The learning rate Eq. 3 will use over the whole run, at about 2·`points` steps: spread over the run and
    again over its first five warm-ups, where the rate turns (the warm-up's end itself included)."""
    whole = np.linspace(1, max(steps, 1), points)
    early = np.linspace(1, max(min(steps, 5 * warmup_steps), 1), points)
    grid = sorted({int(round(x)) for x in np.concatenate([whole, early])} | {min(warmup_steps, steps)})
    return grid, [noam_learning_rate(s, d_model, warmup_steps, scale) for s in grid]


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
class StepTiming:
    """Seconds per optimizer step: the trainer's own `train_step` on real batches of the run's corpus."""

    seconds: float
    measured_tokens: int  # padded tokens of the largest batch timed (whole, or the part of a big one)
    batch_tokens: int
    device: str
    timed_batches: int = 1  # batches of the epoch timed, one per size stratum
    first_step_s: float | None = None  # the run's first step (warm-up), timed apart
    repeats: int = 1  # timings of each timed batch (their median counts)

    @property
    def scaled(self) -> bool:
        """Whether batches too big to time whole were timed on part of their rows and scaled up."""
        # A full batch is measured as whole sentences, so it may fall a sentence short of the budget.
        return self.measured_tokens < 0.9 * self.batch_tokens


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
        evals = cfg.evaluation_count()  # each eval_every steps, the early ones, and at the end
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
