"""Table 3, row (A) on this machine: a tiny base model (8 heads) and its one-head variant, trained side by
side in the background, each in its own process (explorer.training.launcher), on the synthetic reverse task.

Row (A) keeps h·d_k = d_model, so both models have the same parameter count and cost: only the number of
heads differs. The page starts the pair and draws their loss curves as the runs report them.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.config import ModelConfig, count_parameters
from explorer.data import ParallelCorpus, make_splits
from explorer.tokenizer import Tokenizer
from explorer.training import run_folder as rf
from explorer.training.launcher import RunManager
from explorer.training.run_folder import CLI_OWNER
from explorer.training.trainer import TrainConfig

HEADS = (8, 1)  # the base (as the paper's h = 8), then the variant
D_MODEL = 64
PREFIX = "tour-heads"


def variant_config(n_heads: int, vocab_size: int) -> ModelConfig:
    """A tiny encoder-decoder with d_k = d_v = d_model / n_heads (Table 3, row A)."""
    return ModelConfig(
        vocab_size=vocab_size,
        d_model=D_MODEL,
        n_heads=n_heads,
        d_ff=128,
        n_encoder_layers=2,
        n_decoder_layers=2,
        dropout=0.0,
        max_len=32,
    )


def variant_train_config(steps: int) -> TrainConfig:
    return TrainConfig(
        steps=steps,
        batch_tokens=1024,
        warmup_steps=max(1, steps // 5),
        lr_scale=2.0,
        eval_every=max(1, steps // 4),
        save_every=steps,
        bleu_sentences=0,
        device="cpu",
        max_len=32,
        seed=0,
        log_every=5,
    )


def variant_data() -> tuple[ParallelCorpus, ParallelCorpus, Tokenizer]:
    """The pair's data: the synthetic reverse task (3,000 training, 100 validation pairs) and its word vocabulary."""
    train, val = make_splits("reverse", 3000, 100, seed=0, max_len=10)
    return train, val, Tokenizer.train(list(train.source) + list(train.target), 32, model_type="word")


def start_variants(
    manager: RunManager, steps: int = 300, heads: tuple[int, ...] = HEADS, owner: str = CLI_OWNER
) -> list[str]:
    """Start one run per head count, same data, seed and schedule, owned by `owner` (who may stop or discard
    them on a shared server); returns the run names (base first).

    Raises explorer.training.run_folder.JobError when the manager has no room for the runs.
    """
    train, val, tokenizer = variant_data()
    names = []
    for h in heads:
        config = variant_config(h, tokenizer.vocab_size)
        names.append(
            manager.start_new(
                f"{PREFIX}-{h}",
                model_config=config,
                train_config=variant_train_config(steps),
                tokenizer=tokenizer,
                train=train,
                val=val,
                unique=True,
                owner=owner,
                metadata={"tour": "table3-row-A", "n_heads": h},
            )
        )
    return names


@dataclass(frozen=True)
class VariantCurve:
    name: str
    n_heads: int
    status: str
    steps: tuple[int, ...]
    losses: tuple[float, ...]  # training loss (label-smoothed) per logged step
    parameters: int


def variant_curves(manager: RunManager, names: list[str]) -> list[VariantCurve]:
    """What each run has reported so far (runs that vanished are left out)."""
    curves = []
    for name in names:
        snap = manager.snapshot(name)
        if snap is None:
            continue
        spec = rf.read_json(snap.run_dir / rf.SPEC_FILE, {}) or {}
        config = ModelConfig.from_dict(spec["model_config"])
        curves.append(
            VariantCurve(
                name,
                config.n_heads,
                snap.status,
                tuple(int(s) for s in snap.history.get("step", ())),
                tuple(float(v) for v in snap.history.get("loss", ())),
                count_parameters(config),
            )
        )
    return curves
