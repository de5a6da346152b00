"""The command line's view of training: a tqdm progress bar fed by the trainer's callbacks.

When stderr is not a terminal (a background run writing a log) it prints one plain line every
`log_seconds` instead, so the log stays readable with `tail`.
"""

from __future__ import annotations

import math
import sys
import time
from typing import TYPE_CHECKING

from tqdm import tqdm

from explorer.training.callbacks import EvalEvent, StepEvent, TrainingCallback

if TYPE_CHECKING:
    from explorer.training.trainer import Trainer, TrainResult


class ProgressBar(TrainingCallback):
    def __init__(self, log_seconds: float = 60.0) -> None:
        self.bar: tqdm | None = None
        self.interactive = sys.stderr.isatty()
        self.log_seconds, self.last_line = log_seconds, 0.0

    def on_start(self, trainer: Trainer) -> None:
        self.bar = tqdm(
            total=trainer.config.steps,
            initial=trainer.step,
            unit="step",
            dynamic_ncols=True,
            file=sys.stderr,
            mininterval=1.0,
            disable=not self.interactive,
        )

    def on_step(self, event: StepEvent) -> None:
        assert self.bar is not None
        if self.interactive:
            self.bar.update(event.step - self.bar.n)
            self.bar.set_postfix(
                loss=f"{event.loss:.3f}", lr=f"{event.learning_rate:.2e}", tok_s=f"{event.tokens_per_s:,.0f}"
            )
        elif time.monotonic() - self.last_line >= self.log_seconds:
            self.last_line = time.monotonic()
            print(
                f"step {event.step}/{event.total_steps} epoch {event.epoch} loss {event.loss:.3f} "
                f"lr {event.learning_rate:.2e} {event.tokens_per_s:,.0f} tok/s {event.elapsed_s / 60:.1f} min",
                file=sys.stderr,
                flush=True,
            )

    def on_eval(self, event: EvalEvent) -> None:
        bleu = "" if math.isnan(event.val_bleu) else f", BLEU {event.val_bleu:.2f}"
        tqdm.write(f"step {event.step}: validation loss {event.val_loss:.3f}{bleu}", file=sys.stderr)
        for sample in event.samples:
            tqdm.write(f"  {sample.source} -> {sample.output}", file=sys.stderr)
        sys.stderr.flush()

    def on_end(self, result: TrainResult) -> None:
        if self.bar is not None:
            self.bar.close()
