"""Table 3's rows (A), (B), (D) and (E) on this machine: for each, a tiny base model and its variant, trained
side by side in the background, each in its own process (explorer.training.launcher), on a synthetic task.

(A) 8 heads against one, h·d_k = d_model kept (same parameters and cost); (B) a smaller d_k at the same heads;
(D) label smoothing ε_ls = 0.1 against none; (E) sinusoidal against learned positions, trained on short
sequences and tested on longer ones. The tour starts a row's pair and draws their loss curves as the runs
report them; a reloaded page finds the newest pair of each row in the runs folder again.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from explorer.config import ModelConfig, count_parameters
from explorer.data import ParallelCorpus, make_splits
from explorer.tokenizer import Tokenizer
from explorer.training import run_folder as rf
from explorer.training.launcher import RunManager
from explorer.training.run_folder import CLI_OWNER, JobError
from explorer.training.trainer import TrainConfig

D_MODEL = 64
PREFIX = "tour-row"
TOUR_KEY = "tour"  # the run's metadata: which row it belongs to ("table3-row-B") ...
BATCH_KEY = "tour_batch"  # ... and which pair (one start of the row)


@dataclass(frozen=True)
class Variant:
    """One model of a row: its name in the figures and its changes to the row's shared configurations."""

    label: str  # "h = 8", "d_k = 4", "ε_ls = 0", "learned": the same in every language
    model: Mapping[str, Any] = field(default_factory=dict)  # ModelConfig fields
    train: Mapping[str, Any] = field(default_factory=dict)  # TrainConfig fields


@dataclass(frozen=True)
class Row:
    """One Table 3 row made small: a task, its data, the base and the variant, and the steps each trains."""

    letter: str
    task: str
    variants: tuple[Variant, ...]  # the base first (Table 3's rows have two)
    steps: int  # a background run's; the stored results may train longer
    n_train: int = 3000
    n_val: int = 100
    min_len: int = 4
    max_len: int = 10  # of the training and validation sequences
    bleu_sentences: int = 0  # the runs' validation BLEU (greedy), 0 to skip
    max_positions: int = 32  # the model's positions: room for (E)'s longer test sequences

    @property
    def tour(self) -> str:
        return f"table3-row-{self.letter}"


ROWS: dict[str, Row] = {
    row.letter: row
    for row in (
        Row("A", "reverse", (Variant("h = 8", {"n_heads": 8}), Variant("h = 1", {"n_heads": 1})), 300),
        # The paper's (B) quarters d_k (64 to 16) at h = 8; here 16 to 4 at h = 4.
        Row("B", "reverse", (Variant("d_k = 16", {"n_heads": 4}), Variant("d_k = 4", {"n_heads": 4, "d_k": 4})), 400),
        # Little data and a harder task, so the model stays unsure where smoothing has something to change.
        Row(
            "D",
            "sort",
            (
                Variant("\u03b5_ls = 0.1", train={"label_smoothing": 0.1}),
                Variant("\u03b5_ls = 0", train={"label_smoothing": 0.0}),
            ),
            400,
            n_train=1500,
            bleu_sentences=100,
        ),
        # Trained on sequences of up to 10 symbols and tested on up to 20 (explorer.tour.table3_rows).
        Row("E", "copy", (Variant("sinusoidal"), Variant("learned", {"positional": "learned"})), 400, min_len=2),
    )
}


# Every row's base: d_model 64, two layers each side, no dropout (the runs are short and the data plentiful).
TINY = {"d_model": D_MODEL, "n_heads": 8, "d_ff": 128, "n_encoder_layers": 2, "n_decoder_layers": 2, "dropout": 0.0}


def row_config(row: Row, variant: Variant, vocab_size: int) -> ModelConfig:
    """The row's tiny encoder-decoder (TINY) with the variant's changes."""
    return ModelConfig(vocab_size=vocab_size, max_len=row.max_positions, **{**TINY, **variant.model})


def row_train_config(row: Row, variant: Variant, steps: int) -> TrainConfig:
    base = TrainConfig(
        steps=steps,
        batch_tokens=1024,
        warmup_steps=max(1, steps // 5),
        lr_scale=2.0,
        eval_every=max(1, steps // 4),
        save_every=steps,
        bleu_sentences=row.bleu_sentences,
        device="cpu",
        max_len=row.max_positions,
        seed=0,
        log_every=5,
    )
    return replace(base, **variant.train)


def row_data(row: Row) -> tuple[ParallelCorpus, ParallelCorpus, Tokenizer]:
    """The row's data (distinct training and validation sequences of the row's task) and its word vocabulary."""
    train, val = make_splits(row.task, row.n_train, row.n_val, seed=0, min_len=row.min_len, max_len=row.max_len)
    return train, val, Tokenizer.train(list(train.source) + list(train.target), 32, model_type="word")


def start_row(manager: RunManager, letter: str, steps: int | None = None, owner: str = CLI_OWNER) -> list[str]:
    """Start the row's two runs, same data, seed and schedule, owned by `owner` (who may stop or discard them
    on a shared server); returns the run names (base first).

    Raises JobError when the manager has no room for both (then neither starts).
    """
    row = ROWS[letter]
    if len(manager.live_names()) + len(row.variants) > manager.max_jobs:
        raise JobError(
            f"{len(manager.live_names())} of {manager.max_jobs} training slots are taken; the row needs "
            f"{len(row.variants)}"
        )
    train, val, tokenizer = row_data(row)
    batch = secrets.token_hex(4)
    start = partial(manager.start_new, tokenizer=tokenizer, train=train, val=val, unique=True, owner=owner)
    names = []
    for index, variant in enumerate(row.variants):
        names.append(
            start(
                f"{PREFIX}-{letter.lower()}-{index}",
                model_config=row_config(row, variant, tokenizer.vocab_size),
                train_config=row_train_config(row, variant, steps or row.steps),
                metadata={TOUR_KEY: row.tour, BATCH_KEY: batch, "variant": index},
            )
        )
    return names


def newest_pair(manager: RunManager, letter: str) -> list[str]:
    """The run names of the row's newest start (base first), found again from the runs folder after a reload;
    empty when the row never ran here (or a run of the pair was discarded)."""
    tour = ROWS[letter].tour
    found: dict[str, dict[int, str]] = {}
    for run in manager.runs():  # newest first
        metadata = (rf.read_json(run.path / rf.SPEC_FILE, {}) or {}).get("metadata", {})
        if metadata.get(TOUR_KEY) == tour and BATCH_KEY in metadata:
            found.setdefault(str(metadata[BATCH_KEY]), {})[int(metadata.get("variant", 0))] = run.path.name
            pair = found[str(metadata[BATCH_KEY])]
            if len(pair) == len(ROWS[letter].variants):
                return [pair[i] for i in sorted(pair)]
    return []


@dataclass(frozen=True)
class VariantCurve:
    name: str
    label: str
    status: str
    steps: tuple[int, ...]
    losses: tuple[float, ...]  # training loss (label-smoothed where the run smooths) per logged step
    parameters: int


def variant_curves(manager: RunManager, letter: str, names: list[str]) -> list[VariantCurve]:
    """What each run has reported so far (runs that vanished are left out)."""
    curves = []
    for name in names:
        snap = manager.snapshot(name)
        if snap is None:
            continue
        spec = rf.read_json(snap.run_dir / rf.SPEC_FILE, {}) or {}
        config = ModelConfig.from_dict(spec["model_config"])
        variant = ROWS[letter].variants[int(spec.get("metadata", {}).get("variant", 0))]
        curves.append(
            VariantCurve(
                name,
                variant.label,
                snap.status,
                tuple(int(s) for s in snap.history.get("step", ())),
                tuple(float(v) for v in snap.history.get("loss", ())),
                count_parameters(config),
            )
        )
    return curves
