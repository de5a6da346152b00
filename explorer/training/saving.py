"""Saving a run as an inference checkpoint (no optimizer state), with its attention snapshots, and the
watched sentences' translations the snapshots are made of."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.checkpoint import load_checkpoint, save_checkpoint
from explorer.inference import translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.training.callbacks import SampleTranslation
from explorer.training.run_folder import latest_dir
from explorer.training.snapshots import AttentionSnapshot, load_snapshots, snapshot_files

if TYPE_CHECKING:
    from explorer.training.trainer import Trainer


def export_model(
    model: Transformer,
    tokenizer: Tokenizer,
    target: str | Path,
    *,
    metadata: dict[str, Any],
    training: dict[str, Any] | None,
    snapshots: Sequence[AttentionSnapshot],
) -> Path:
    """Save an inference checkpoint (no optimizer state) with its attention snapshots, atomically."""
    return save_checkpoint(
        target,
        model,
        tokenizer,
        metadata=metadata,
        training=training,
        extra_files=snapshot_files(snapshots) if snapshots else None,
    )


def export_run(run_dir: str | Path, target: str | Path) -> tuple[Path, int]:
    """Save a run's `latest/` checkpoint (with its snapshots) as the inference checkpoint `target`.

    Returns the path and the step it holds.
    """
    run_dir = Path(run_dir)
    checkpoint = load_checkpoint(latest_dir(run_dir) or run_dir / "latest")
    step = int((checkpoint.training or {}).get("step", 0))
    snapshots = [s for s in load_snapshots(run_dir) if s.step <= step]
    path = export_model(
        checkpoint.model,
        checkpoint.tokenizer,
        target,
        training=checkpoint.training,
        metadata={**checkpoint.metadata, "step": step, "run": run_dir.name},
        snapshots=snapshots,
    )
    return path, step


def sample_translations(trainer: Trainer) -> list[SampleTranslation]:
    """The watched sentences translated by the trainer's model now, with cross-attention (as at evaluations)."""
    was_training = trainer.model.training
    trainer.model.eval()
    try:
        found = translate(trainer.model, trainer.tokenizer, list(trainer.config.sample_sentences), with_attention=True)
    finally:
        trainer.model.train(was_training)
    samples = []
    for t in found:
        assert t.attention is not None, "translate(with_attention=True) returned no attention"
        samples.append(
            SampleTranslation(t.source, t.output, t.source_pieces, t.target_output_pieces, t.attention.cross)
        )
    return samples
