"""What the trainer reports, and to whom: plain events handed to callbacks.

The command line turns them into a progress bar, the app into live charts; the trainer itself never
prints or draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class StepEvent:
    step: int
    total_steps: int
    loss: float  # label-smoothed training loss per target token, over the last batch
    learning_rate: float
    tokens_per_s: float  # target tokens per second since the previous event
    epoch: int
    elapsed_s: float


@dataclass(frozen=True)
class SampleTranslation:
    """A fixed sentence translated at an evaluation, so students can watch attention form."""

    source: str
    output: str
    source_pieces: list[str]
    output_pieces: list[str]
    cross_attention: np.ndarray  # (layers, heads, output, source)


@dataclass(frozen=True)
class EvalEvent:
    step: int
    val_loss: float  # per-token NLL without smoothing (perplexity = exp)
    val_bleu: float  # sacreBLEU on the first N validation sentences, greedy; NaN when skipped
    samples: list[SampleTranslation] = field(default_factory=list)


class TrainingCallback:
    """Base class with no-op hooks; override the ones you need."""

    def on_start(self, trainer: Any) -> None: ...

    def on_step(self, event: StepEvent) -> None: ...

    def on_eval(self, event: EvalEvent) -> None: ...

    def on_checkpoint(self, path: Path, step: int) -> None: ...

    def on_end(self, result: Any) -> None: ...
