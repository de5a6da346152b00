"""The training process's side of the run folder: a trainer callback that writes progress.json, attention
snapshots and saved.json, and does the save requests it finds in requests/ between two steps."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.training import run_folder as rf
from explorer.training.callbacks import EvalEvent, StepEvent, TrainingCallback
from explorer.training.saving import claimed_target, export_model, export_run, sample_translations
from explorer.training.snapshots import AttentionSnapshot, load_snapshots, save_snapshots, thin_snapshots

if TYPE_CHECKING:
    from explorer.training.trainer import Trainer

# At most one progress.json rewrite per second (plus one per evaluation and at the end); a test that needs the
# step at an exact moment sets EXPLORER_PROGRESS_S=0 for a rewrite after every logged step.
PROGRESS_S = float(os.environ.get("EXPLORER_PROGRESS_S", "1.0"))


class FolderReporter(TrainingCallback):
    """Runs inside the training process; everything it writes is atomic (write, then rename)."""

    def __init__(self, run_dir: Path, name: str) -> None:
        self.run_dir, self.name = Path(run_dir), name
        self.trainer: Trainer | None = None
        self.attention: list[AttentionSnapshot] = []
        self.resumed_from = 0
        self.session_start = time.perf_counter()
        self.last_write = 0.0

    # ---- trainer events -----------------------------------------------------------------------------------
    def on_start(self, trainer: Trainer) -> None:
        self.trainer = trainer
        self.resumed_from = trainer.step
        self.session_start = time.perf_counter()
        self.attention = [s for s in load_snapshots(self.run_dir) if s.step <= trainer.step]
        self.write_progress()
        if trainer.step == 0 and trainer.config.sample_sentences:
            # The untrained model's attention, so the first snapshot shows where learning starts from.
            self.keep(AttentionSnapshot(0, tuple(sample_translations(trainer))))

    def on_step(self, event: StepEvent) -> None:
        if time.perf_counter() - self.last_write >= PROGRESS_S or event.step == event.total_steps:
            self.write_progress()
        self.serve_requests()

    def on_eval(self, event: EvalEvent) -> None:
        if event.samples:
            self.keep(AttentionSnapshot(event.step, tuple(event.samples)))
        self.write_progress()

    def on_checkpoint(self, path: Path, step: int) -> None:
        self.write_progress()  # the listing's step is never behind the checkpoint's

    def on_end(self, result: Any) -> None:
        self.write_progress()

    # ---- files --------------------------------------------------------------------------------------------
    def keep(self, snapshot: AttentionSnapshot) -> None:
        kept = [s for s in self.attention if s.step != snapshot.step]
        self.attention = thin_snapshots(kept + [snapshot])
        save_snapshots(self.run_dir, self.attention)

    def write_progress(self) -> None:
        trainer = self.trainer
        assert trainer is not None, "write_progress() before on_start()"
        session = time.perf_counter() - self.session_start
        done = trainer.step - self.resumed_from
        total = trainer.config.steps
        eta = (total - trainer.step) * session / done if done > 0 and total > trainer.step else None
        rates = trainer.history.get("tokens_per_s", [])
        rf.write_json(
            self.run_dir / rf.PROGRESS_FILE,
            {
                "step": trainer.step,
                "total_steps": total,
                "resumed_from": self.resumed_from,
                "elapsed_s": trainer.elapsed(),
                "session_s": session,
                "eta_s": eta,
                "tokens_per_s": rates[-1] if rates else None,
                "updated": time.time(),
                "d_model": trainer.model_config.d_model,
                "warmup_steps": trainer.config.warmup_steps,
                "lr_scale": trainer.config.lr_scale,
                "sample_sentences": list(trainer.config.sample_sentences),
                "device": str(trainer.device),
                "history": {
                    key: [None if isinstance(v, float) and math.isnan(v) else v for v in values]
                    for key, values in trainer.history.items()
                },
            },
        )
        self.last_write = time.perf_counter()

    # ---- saving -------------------------------------------------------------------------------------------
    def save(self, target: Path) -> Path:
        """Save the model as it is now (between two steps) as an inference checkpoint with its snapshots, at
        `target` or, when that is another run's checkpoint, the next free name (`claim_target`)."""
        trainer = self.trainer
        assert trainer is not None, "save() before on_start()"
        bleu = [b for b in trainer.history["val_bleu"] if b is not None]
        with claimed_target(self.run_dir, target) as path:
            export_model(
                trainer.model,
                trainer.tokenizer,
                path,
                training=trainer.training_state(),
                metadata={
                    **trainer.metadata,
                    "step": trainer.step,
                    "run": self.name,
                    "val_bleu": bleu[-1] if bleu else None,
                },
                snapshots=[s for s in self.attention if s.step <= trainer.step],
            )
        record_saved(self.run_dir, path, trainer.step)
        return path

    def serve_requests(self) -> None:
        for target in claim_requests(self.run_dir):
            self.save(target)


def claim_requests(run_dir: Path) -> list[Path]:
    """Take the pending save requests (each claimed by a rename, so the trainer and a launcher that found the
    process gone never both do one) and return their targets, oldest first."""
    folder = run_dir / rf.REQUESTS_DIR
    if not folder.is_dir():
        return []
    targets = []
    for request in sorted(folder.glob("*.json")):
        claimed = request.with_name(f".{request.stem}.{os.getpid()}.claimed")
        try:
            os.rename(request, claimed)
        except FileNotFoundError:
            continue  # someone else took it
        value = rf.read_json(claimed, {}) or {}
        claimed.unlink(missing_ok=True)
        if value.get("target"):
            targets.append(Path(value["target"]))
    return targets


def serve_requests_from_latest(run_dir: Path) -> int:
    """Do the pending save requests of a run whose process has ended, from its `latest/` checkpoint."""
    done = 0
    for target in claim_requests(run_dir):
        path, step = export_run(run_dir, target)
        record_saved(run_dir, path, step)
        done += 1
    return done


def record_saved(run_dir: Path, path: Path, step: int) -> None:
    saved = rf.read_json(run_dir / rf.SAVED_FILE, []) or []
    rf.write_json(run_dir / rf.SAVED_FILE, [*saved, [str(path), int(step)]])
