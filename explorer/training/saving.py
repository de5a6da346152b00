"""Saving a run as an inference checkpoint (no optimizer state), with its attention snapshots, and the
watched sentences' translations the snapshots are made of; a save never replaces a checkpoint another run
made (`claimed_target`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.checkpoint import load_checkpoint, read_config, save_checkpoint
from explorer.inference import translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.training import run_folder as rf
from explorer.training.callbacks import SampleTranslation
from explorer.training.run_folder import latest_dir
from explorer.training.snapshots import AttentionSnapshot, load_snapshots, snapshot_files

if TYPE_CHECKING:
    from explorer.training.trainer import Trainer


def saved_by(run_dir: Path, checkpoint: Path) -> bool:
    """Whether `checkpoint` holds a model the run in `run_dir` saved (listed in its saved.json, and its
    metadata names the run: a checkpoint another run saved over it since is no longer this run's)."""
    listed = {Path(p).resolve() for p, *_ in rf.read_json(run_dir / rf.SAVED_FILE, []) or []}
    if checkpoint.resolve() not in listed:
        return False
    try:
        return read_config(checkpoint)[1].get("run") == run_dir.name
    except Exception:  # noqa: BLE001 - anything unreadable there is not known to be this run's
        return False


def claim_target(run_dir: Path, target: str | Path) -> Path:
    """The folder a save of the run in `run_dir` that asked for `target` writes to, reserved for it.

    Never a folder another run (or anyone) made: `target` when it is free, when it holds this run's own earlier
    save, or when it is the checkpoint the run was started to replace (run.json's "replace": the Train page's
    "Replace the existing checkpoint" box); else the first free "target-2", "target-3", ... A free name is
    reserved by creating its folder (mkdir is atomic), so two runs saving at the same moment never pick the
    same one; the save then replaces that empty folder.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    replace = (rf.read_json(run_dir / rf.RUN_FILE, {}) or {}).get("replace")
    if replace and Path(replace) == target:
        return target
    n = 1
    while True:
        candidate = target if n == 1 else target.with_name(f"{target.name[:60]}-{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            if saved_by(run_dir, candidate):
                return candidate
            n += 1


@contextlib.contextmanager
def claimed_target(run_dir: Path, target: str | Path) -> Iterator[Path]:
    """`claim_target`, giving the reserved folder back when the save in the block fails (rmdir: only while it
    is still empty, never a checkpoint)."""
    path = claim_target(run_dir, target)
    try:
        yield path
    except BaseException:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise


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
    """Save a run's `latest/` checkpoint (with its snapshots) as the inference checkpoint `target`, or under
    the next free name when `target` is another run's (`claim_target`).

    Returns the path and the step it holds.
    """
    run_dir = Path(run_dir)
    checkpoint = load_checkpoint(latest_dir(run_dir) or run_dir / "latest")
    step = int((checkpoint.training or {}).get("step", 0))
    snapshots = [s for s in load_snapshots(run_dir) if s.step <= step]
    with claimed_target(run_dir, target) as path:
        export_model(
            checkpoint.model,
            checkpoint.tokenizer,
            path,
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
