"""Training hyper-parameters (Section 5): what a run is asked to do, saved in every checkpoint's training.json.

Its own module, apart from the training loop (explorer.training.trainer), so that the app's server can plan
and start a run without importing the loop: the run itself trains in its own process.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


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
    save_every: int = 500
    keep_last: int = 5  # numbered checkpoints kept for averaging
    bleu_sentences: int = 200  # validation BLEU on this many sentences (greedy), 0 to skip
    device: str = "auto"
    sample_sentences: tuple[str, ...] = ()  # translated at each evaluation, with cross-attention

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if "sample_sentences" in values:
            values["sample_sentences"] = tuple(values["sample_sentences"])
        return cls(**values)
