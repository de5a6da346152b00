"""Training hyper-parameters (Section 5): what a run is asked to do, saved in every checkpoint's training.json.

Its own module, apart from the training loop (explorer.training.trainer), so that the app's server can plan
and start a run without importing the loop: the run itself trains in its own process.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

EARLY_EVAL_FIRST = 10  # the first early evaluation (TrainConfig.eval_early), then at twice the step each time


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass(frozen=True)
class TrainConfig:
    """Training hyper-parameters (Section 5). Saved in every checkpoint's training.json."""

    steps: int = 1000
    batch_tokens: int = 4096  # padded tokens per batch per side (the paper: ~25000 source + 25000 target)
    warmup_steps: int = 4000
    lr_scale: float = 1.0
    label_smoothing: float = 0.1
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_eps: float = 1e-9
    seed: int = 0
    max_len: int = 128  # training pairs are cut to this many positions per side
    log_every: int = 10
    eval_every: int = 500
    # Also evaluate at steps 10, 20, 40, 80, ... below eval_every: the first minute of a short run is when
    # attention forms, and a class watching it should not wait for the first regular evaluation.
    eval_early: bool = False
    save_every: int = 500
    keep_last: int = 5  # numbered checkpoints kept for averaging
    bleu_sentences: int = 200  # validation BLEU on this many sentences (greedy), 0 to skip
    device: str = "auto"
    sample_sentences: tuple[str, ...] = ()  # translated at each evaluation, with cross-attention

    def evaluates_at(self, step: int) -> bool:
        """Whether the run evaluates after `step`: every `eval_every` steps, and with `eval_early` at 10, 20, 40,
        80, ... steps before the first of those."""
        if not self.eval_every or step < 1:
            return False
        if step % self.eval_every == 0:
            return True
        return (
            self.eval_early
            and step < self.eval_every
            and step % EARLY_EVAL_FIRST == 0
            and _power_of_two(step // EARLY_EVAL_FIRST)
        )

    def evaluation_count(self) -> int:
        """Evaluations in the whole run, the one at its end included (it evaluates there when the last step
        is not one of `evaluates_at`)."""
        if not self.eval_every:
            return 0
        regular = -(-self.steps // self.eval_every)
        early = 0
        step = EARLY_EVAL_FIRST
        while self.eval_early and step < min(self.eval_every, self.steps + 1):
            early += 1
            step *= 2
        return regular + early

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if "sample_sentences" in values:
            values["sample_sentences"] = tuple(values["sample_sentences"])
        return cls(**values)
