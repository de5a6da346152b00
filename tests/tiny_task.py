"""The tiny reverse task that training-process tests start runs on: small enough that a step takes a few
milliseconds on one thread, so those tests spend their time on what they check (processes, folders, signals),
not on arithmetic.

Tests take it through the `tiny_task` fixture (tests/conftest.py); scripts that a test runs in a process of
their own import `tiny_task()` and `tiny_train_config()` from here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from explorer.config import ModelConfig
from explorer.data import ParallelCorpus, make_splits
from explorer.tokenizer import Tokenizer
from explorer.training.datasets import train_tokenizer
from explorer.training.trainer import TrainConfig

LONG = 1_000_000  # steps of a run that only ends when stopped (or killed)


class TinyTask(NamedTuple):
    train: ParallelCorpus
    val: ParallelCorpus
    tokenizer: Tokenizer
    config: ModelConfig


def tiny_config(vocab_size: int) -> ModelConfig:
    """One layer each side, d_model 16, two heads."""
    return ModelConfig(
        vocab_size=vocab_size,
        d_model=16,
        n_heads=2,
        d_ff=32,
        n_encoder_layers=1,
        n_decoder_layers=1,
        dropout=0.0,
        max_len=32,
    )


def tiny_task() -> TinyTask:
    """600 training and 40 validation pairs of the reverse task (up to 6 symbols), its vocabulary and model."""
    train, val = make_splits("reverse", 600, 40, seed=0, max_len=6)
    tokenizer = train_tokenizer(train, 64, synthetic=True)
    return TinyTask(train, val, tokenizer, tiny_config(tokenizer.vocab_size))


def tiny_train_config(**overrides: Any) -> TrainConfig:
    """A run of the tiny task that goes on until stopped, logs every step and saves nothing unless asked."""
    options: dict[str, Any] = dict(
        steps=LONG,
        batch_tokens=256,
        warmup_steps=20,
        eval_every=0,
        save_every=0,
        log_every=1,
        bleu_sentences=0,
        device="cpu",
        max_len=32,
    )
    options.update(overrides)
    return TrainConfig(**options)
