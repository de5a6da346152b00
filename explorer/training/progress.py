"""The command line's view of training: a tqdm progress bar fed by the trainer's callbacks."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from tqdm import tqdm

from explorer.training.callbacks import EvalEvent, StepEvent, TrainingCallback


class ProgressBar(TrainingCallback):
    def __init__(self) -> None:
        self.bar: tqdm | None = None

    def on_start(self, trainer) -> None:
        self.bar = tqdm(total=trainer.config.steps, initial=trainer.step, unit="step", dynamic_ncols=True,
                        file=sys.stderr, mininterval=1.0)

    def on_step(self, event: StepEvent) -> None:
        assert self.bar is not None
        self.bar.update(event.step - self.bar.n)
        self.bar.set_postfix(loss=f"{event.loss:.3f}", lr=f"{event.learning_rate:.2e}",
                             tok_s=f"{event.tokens_per_s:,.0f}")

    def on_eval(self, event: EvalEvent) -> None:
        bleu = "" if math.isnan(event.val_bleu) else f", BLEU {event.val_bleu:.2f}"
        tqdm.write(f"step {event.step}: validation loss {event.val_loss:.3f}{bleu}", file=sys.stderr)
        for sample in event.samples:
            tqdm.write(f"  {sample.source} -> {sample.output}", file=sys.stderr)

    def on_checkpoint(self, path: Path, step: int) -> None:
        pass

    def on_end(self, result) -> None:
        if self.bar is not None:
            self.bar.close()
