"""Training jobs that outlive a page run: the app's train page starts, watches, stops and resumes them here.

A `JobManager` (one per process; the app holds it with `st.cache_resource`) runs each job in a background
thread that calls the one training loop, `Trainer.run(stop=event)`, the same code as `explorer train`. The
trainer reports through a callback that appends to the job's state under a lock; a page reads an immutable
`JobSnapshot` whenever it redraws, so reruns, page switches, reloads and second browser sessions neither
stop nor duplicate a run.

A job's run directory holds everything needed to resume it after the app process died:
    latest/                          periodic checkpoint with optimizer state (TrainConfig.save_every)
    step-N/, best/                   the trainer's numbered and best checkpoints
    data/{train,val}.{src,tgt}       the exact corpus, one sentence per line
    run.json                         the run's name and where its final model is saved
    attention_snapshots.npz + .json  cross-attention of the watched sentences at every evaluation
                                     (explorer.training.snapshots; also written into every saved checkpoint)
"""

from __future__ import annotations

import json
import math
import re
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from explorer.checkpoint import is_checkpoint, load_checkpoint, save_checkpoint
from explorer.config import ModelConfig
from explorer.data.corpus import ParallelCorpus, read_parallel
from explorer.inference import translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.training.callbacks import EvalEvent, SampleTranslation, StepEvent, TrainingCallback
from explorer.training.snapshots import (AttentionSnapshot, load_snapshots, save_snapshots, snapshot_files,
                                         thin_snapshots, write_atomic)
from explorer.training.trainer import TrainConfig, Trainer, TrainResult, resume_trainer

RUN_FILE, DATA_DIR = "run.json", "data"
DEFAULT_MAX_JOBS = 2
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

HISTORY_KEYS = ("step", "loss", "lr", "tokens_per_s", "eval_step", "val_loss", "val_bleu")
LIVE = ("preparing", "running", "stopping")


class JobError(RuntimeError):
    """A job that cannot be started, resumed or saved; the message says why and what to do."""


def _already_training(name: str) -> JobError:
    return JobError(f"a run named {name!r} is already training; watch it below, stop it, or choose another name")


# ------------------------------------------------------------------------------------------- run folders
def validate_run_name(name: str) -> str:
    """A run name doubles as a folder name under runs/ and checkpoints/: letters, digits, '.', '_', '-'."""
    name = name.strip()
    if not _NAME.match(name):
        raise JobError(f"run name {name!r} is not usable: use 1 to 64 letters, digits, '.', '_' or '-', "
                       "starting with a letter or digit")
    return name


def write_run_data(run_dir: Path, train: ParallelCorpus, val: ParallelCorpus) -> None:
    """Keep the run's exact corpus beside its checkpoints, so it can be resumed without the original upload."""
    data = run_dir / DATA_DIR
    data.mkdir(parents=True, exist_ok=True)
    for split, corpus in (("train", train), ("val", val)):
        for side, sentences in (("src", corpus.source), ("tgt", corpus.target)):
            write_atomic(data / f"{split}.{side}", ("\n".join(sentences) + "\n").encode("utf-8"))


def require_run_data(run_dir: Path) -> Path:
    """The run's `data/` folder; JobError when the run was not started from the train page (no corpus copy)."""
    data = Path(run_dir) / DATA_DIR
    if not (data / "train.src").is_file():
        raise JobError(f"{run_dir} has no {DATA_DIR}/ folder: it was not started from the train page; resume it "
                       "with `explorer train --resume` instead")
    return data


def read_run_data(run_dir: Path) -> tuple[ParallelCorpus, ParallelCorpus | None]:
    """The corpus written by `write_run_data`; no validation set when its file is empty."""
    data = require_run_data(run_dir)
    train = read_parallel(data / "train.src", data / "train.tgt")
    val = read_parallel(data / "val.src", data / "val.tgt") if (data / "val.src").stat().st_size > 1 else None
    return train, val


def read_training_state(run_dir: Path) -> dict[str, Any]:
    """`latest/training.json` of a run: its step, TrainConfig and history (cheap: no tensors are read)."""
    return json.loads((Path(run_dir) / "latest" / "training.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class RunInfo:
    """A run directory on disk, as the page lists it for resuming."""

    name: str
    path: Path
    step: int
    total_steps: int

    @property
    def finished(self) -> bool:
        return self.step >= self.total_steps


def find_runs(root: str | Path) -> list[RunInfo]:
    """Run directories under `root` with a resumable `latest/` checkpoint (only JSON is read: cheap)."""
    root = Path(root)
    if not root.is_dir():
        return []
    runs = []
    for path in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if not is_checkpoint(path / "latest") or not (path / "latest" / "training.json").is_file():
            continue
        try:
            state = read_training_state(path)
        except (OSError, ValueError):
            continue
        runs.append(RunInfo(path.name, path, int(state.get("step", 0)),
                            int(state.get("train_config", {}).get("steps", 0))))
    return runs


# ----------------------------------------------------------------------------------------------- saving
def export_model(model: Transformer, tokenizer: Tokenizer, target: str | Path, *, metadata: dict[str, Any],
                 training: dict[str, Any] | None, snapshots: Sequence[AttentionSnapshot]) -> Path:
    """Save an inference checkpoint (no optimizer state) with its attention snapshots, atomically."""
    return save_checkpoint(target, model, tokenizer, metadata=metadata, training=training,
                           extra_files=snapshot_files(snapshots) if snapshots else None)


def export_run(run_dir: str | Path, target: str | Path) -> Path:
    """Save a run's `latest/` checkpoint (with its snapshots) as the inference checkpoint `target`."""
    run_dir = Path(run_dir)
    checkpoint = load_checkpoint(run_dir / "latest")
    step = int((checkpoint.training or {}).get("step", 0))
    snapshots = [s for s in load_snapshots(run_dir) if s.step <= step]
    return export_model(checkpoint.model, checkpoint.tokenizer, target, training=checkpoint.training,
                        metadata={**checkpoint.metadata, "step": step, "run": run_dir.name}, snapshots=snapshots)


# ------------------------------------------------------------------------------------------------- jobs
@dataclass(frozen=True)
class JobSnapshot:
    """A consistent, immutable copy of a job's state for drawing; `history` lists are tuples."""

    name: str
    status: str  # preparing, running, stopping, finished, stopped, failed
    run_dir: Path
    step: int
    total_steps: int
    resumed_from: int
    elapsed_s: float
    history: dict[str, tuple]
    attention: tuple[AttentionSnapshot, ...]
    saved: tuple[tuple[str, int], ...]  # (checkpoint folder, step) for every model this job saved
    error: str | None
    d_model: int | None
    warmup_steps: int | None
    lr_scale: float
    sample_sentences: tuple[str, ...]
    elapsed_session_s: float = 0.0  # wall time since this thread's trainer started (for the ETA)

    @property
    def live(self) -> bool:
        return self.status in LIVE

    @property
    def progress(self) -> float:
        return min(1.0, self.step / self.total_steps) if self.total_steps else 0.0

    @property
    def tokens_per_s(self) -> float | None:
        rates = self.history.get("tokens_per_s", ())
        return rates[-1] if rates else None

    def eta_s(self) -> float | None:
        """Seconds left, from the pace of this session's steps (None before two reports)."""
        steps = self.history.get("step", ())
        done = self.step - self.resumed_from
        if self.status != "running" or done <= 0 or len(steps) < 2 or self.elapsed_session_s <= 0:
            return None
        return (self.total_steps - self.step) * self.elapsed_session_s / done


class _Job:
    """Mutable job state; every field is read and written under `lock`."""

    def __init__(self, name: str, run_dir: Path, save_to: Path | None, total_steps: int) -> None:
        self.name, self.run_dir, self.save_to = name, run_dir, save_to
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.status = "preparing"
        self.step = self.resumed_from = 0
        self.total_steps = total_steps
        self.history: dict[str, list] = {key: [] for key in HISTORY_KEYS}
        self.attention: list[AttentionSnapshot] = []
        self.saved: list[tuple[str, int]] = []
        self.save_requests: list[Path] = []
        self.error: str | None = None
        self.d_model: int | None = None
        self.warmup_steps: int | None = None
        self.lr_scale = 1.0
        self.sample_sentences: tuple[str, ...] = ()
        self.elapsed_s = 0.0
        self.session_start = time.perf_counter()
        self.thread: threading.Thread | None = None

    def is_live(self) -> bool:
        with self.lock:
            return self.status in LIVE

    def snapshot(self) -> JobSnapshot:
        with self.lock:
            running = self.status == "running"
            return JobSnapshot(
                name=self.name, status=self.status, run_dir=self.run_dir, step=self.step,
                total_steps=self.total_steps, resumed_from=self.resumed_from, elapsed_s=self.elapsed_s,
                history={k: tuple(v) for k, v in self.history.items()}, attention=tuple(self.attention),
                saved=tuple(self.saved), error=self.error, d_model=self.d_model, warmup_steps=self.warmup_steps,
                lr_scale=self.lr_scale, sample_sentences=self.sample_sentences,
                elapsed_session_s=(time.perf_counter() - self.session_start) if running else 0.0)


class _JobCallback(TrainingCallback):
    """Runs in the training thread: copies events into the job and performs saves asked for by the page."""

    def __init__(self, job: _Job) -> None:
        self.job = job
        self.trainer: Trainer | None = None

    def on_start(self, trainer: Trainer) -> None:
        self.trainer = trainer
        previous = [s for s in load_snapshots(self.job.run_dir) if s.step <= trainer.step]
        with self.job.lock:
            job = self.job
            job.status = "stopping" if job.stop_event.is_set() else "running"
            job.step = job.resumed_from = trainer.step
            job.total_steps = trainer.config.steps
            job.history = {key: list(trainer.history.get(key, [])) for key in HISTORY_KEYS}
            job.d_model, job.warmup_steps = trainer.model_config.d_model, trainer.config.warmup_steps
            job.lr_scale, job.sample_sentences = trainer.config.lr_scale, trainer.config.sample_sentences
            job.elapsed_s = trainer.elapsed()
            job.attention = previous
            job.session_start = time.perf_counter()
        if trainer.step == 0 and trainer.config.sample_sentences:
            # The untrained model's attention, so the first snapshot shows where learning starts from.
            self._add_snapshot(AttentionSnapshot(0, tuple(sample_translations(trainer))))

    def on_step(self, event: StepEvent) -> None:
        with self.job.lock:
            job = self.job
            job.step, job.elapsed_s = event.step, event.elapsed_s
            for key, value in (("step", event.step), ("loss", event.loss), ("lr", event.learning_rate),
                               ("tokens_per_s", event.tokens_per_s)):
                job.history[key].append(value)
            requests, job.save_requests = job.save_requests, []
        for target in requests:
            self.save(target)

    def on_eval(self, event: EvalEvent) -> None:
        snapshot = AttentionSnapshot(event.step, tuple(event.samples)) if event.samples else None
        with self.job.lock:  # scores and attention of one evaluation appear together
            history = self.job.history
            history["eval_step"].append(event.step)
            history["val_loss"].append(event.val_loss)
            history["val_bleu"].append(None if math.isnan(event.val_bleu) else event.val_bleu)
            snapshots = self._keep(snapshot) if snapshot is not None else None
        if snapshots is not None:
            save_snapshots(self.job.run_dir, snapshots)

    def _add_snapshot(self, snapshot: AttentionSnapshot) -> None:
        with self.job.lock:
            snapshots = self._keep(snapshot)
        save_snapshots(self.job.run_dir, snapshots)

    def _keep(self, snapshot: AttentionSnapshot) -> list[AttentionSnapshot]:
        """Add to the job's snapshots (caller holds the lock; a snapshot of the same step is replaced) and
        return a copy of them to write to disk outside the lock."""
        kept = [s for s in self.job.attention if s.step != snapshot.step]
        self.job.attention = thin_snapshots(kept + [snapshot])
        return list(self.job.attention)

    def save(self, target: Path) -> Path:
        """Save the model as it is now (between two steps, in the training thread)."""
        trainer = self.trainer
        assert trainer is not None, "save() before on_start()"
        with self.job.lock:
            snapshots = list(self.job.attention)
        bleu = [b for b in trainer.history["val_bleu"] if b is not None]
        path = export_model(trainer.model, trainer.tokenizer, target, training=trainer.training_state(),
                            metadata={**trainer.metadata, "step": trainer.step, "run": self.job.name,
                                      "val_bleu": bleu[-1] if bleu else None},
                            snapshots=[s for s in snapshots if s.step <= trainer.step])
        with self.job.lock:
            self.job.saved.append((str(path), trainer.step))
        return path


def sample_translations(trainer: Trainer) -> list[SampleTranslation]:
    """The watched sentences translated by the trainer's model now, with cross-attention (as at evaluations)."""
    was_training = trainer.model.training
    trainer.model.eval()
    try:
        found = translate(trainer.model, trainer.tokenizer, list(trainer.config.sample_sentences),
                          with_attention=True)
    finally:
        trainer.model.train(was_training)
    samples = []
    for t in found:
        assert t.attention is not None, "translate(with_attention=True) returned no attention"
        samples.append(SampleTranslation(t.source, t.output, t.source_pieces, t.target_output_pieces,
                                         t.attention.cross))
    return samples


Builder = Callable[[Sequence[TrainingCallback]], Trainer]


class JobManager:
    """Process-wide registry of training jobs: one per run name, at most `max_jobs` running at once."""

    def __init__(self, max_jobs: int = DEFAULT_MAX_JOBS) -> None:
        if max_jobs < 1:
            raise ValueError(f"max_jobs must be at least 1, got {max_jobs}")
        self.max_jobs = max_jobs
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()

    def _get(self, name: str) -> _Job | None:
        with self._lock:
            return self._jobs.get(name)

    # ---- reading ------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every job this process knows, newest first."""
        with self._lock:
            return list(reversed(self._jobs))

    def snapshot(self, name: str) -> JobSnapshot | None:
        job = self._get(name)
        return job.snapshot() if job is not None else None

    def live_names(self) -> list[str]:
        return [name for name in self.names() if (s := self.snapshot(name)) is not None and s.live]

    def wait(self, name: str, timeout: float | None = None) -> JobSnapshot:
        """Block until the job's thread ends (for the command line and tests)."""
        with self._lock:
            job = self._jobs[name]
        if job.thread is not None:
            job.thread.join(timeout)
        return job.snapshot()

    # ---- starting -----------------------------------------------------------------------------------
    def start(self, name: str, build: Builder, *, run_dir: str | Path, total_steps: int,
              save_to: str | Path | None = None) -> None:
        """Run `build(callbacks).run(stop=...)` in a background thread under `name`.

        `build` runs in that thread too (loading a checkpoint or a corpus does not hold up the page).
        When the run completes (not when stopped), the model is saved to `save_to` if given.
        Raises JobError when a job of that name is live or `max_jobs` jobs are running.
        """
        name = validate_run_name(name)
        job = _Job(name, Path(run_dir), Path(save_to) if save_to is not None else None, total_steps)
        with self._lock:
            current = self._jobs.get(name)
            if current is not None and current.is_live():
                raise _already_training(name)
            live = [n for n, j in self._jobs.items() if j.is_live()]
            if len(live) >= self.max_jobs:
                raise JobError(f"{len(live)} training runs are already going ({', '.join(live)}); at most "
                               f"{self.max_jobs} run at once on this machine. Stop one or wait for it to finish.")
            busy = [n for n, j in self._jobs.items() if j.run_dir == job.run_dir and j.is_live()]
            if busy:
                raise JobError(f"{job.run_dir} is in use by run {busy[0]!r}")
            self._jobs.pop(name, None)
            self._jobs[name] = job  # re-inserted: newest last
            job.thread = threading.Thread(target=self._run, args=(job, build), name=f"train-{name}", daemon=True)
            job.thread.start()

    def start_new(self, name: str, *, model_config: ModelConfig, train_config: TrainConfig, tokenizer: Tokenizer,
                  train: ParallelCorpus, val: ParallelCorpus, run_dir: str | Path,
                  save_to: str | Path | None = None, metadata: dict[str, Any] | None = None) -> None:
        """Start a fresh run in `run_dir` (which must not hold a run yet): writes its corpus, then trains."""
        name = validate_run_name(name)
        run_dir = Path(run_dir)
        if (run_dir / "latest").exists():
            raise JobError(f"a run named {name!r} already exists in {run_dir}; resume it, discard it, or choose "
                           "another name")
        current = self._get(name)
        if current is not None and current.is_live():
            raise _already_training(name)  # checked before the corpus is written; start() checks again
        write_run_data(run_dir, train, val)
        info = {"name": name, "save_to": str(save_to) if save_to is not None else None, "created": time.time(),
                "train_pairs": len(train), "val_pairs": len(val)}
        write_atomic(run_dir / RUN_FILE, (json.dumps(info, indent=2) + "\n").encode("utf-8"))
        metadata = {**(metadata or {}), "run": name}

        def build(callbacks: Sequence[TrainingCallback]) -> Trainer:
            return Trainer(model_config, train_config, tokenizer, train, val, run_dir, callbacks, metadata=metadata)

        try:
            self.start(name, build, run_dir=run_dir, total_steps=train_config.steps, save_to=save_to)
        except JobError:
            shutil.rmtree(run_dir, ignore_errors=True)  # nothing was trained: leave no half-made run behind
            raise

    def resume(self, name: str, run_dir: str | Path, *, steps: int | None = None,
               save_to: str | Path | None = None) -> None:
        """Continue the run in `run_dir` from its `latest/` checkpoint (weights, Adam moments, data position).

        `steps` is the new total (default: the run's own); `save_to` defaults to the one in run.json.
        """
        run_dir = Path(run_dir)
        if not is_checkpoint(run_dir / "latest"):
            raise JobError(f"{run_dir} has no latest/ checkpoint to resume from")
        require_run_data(run_dir)
        if save_to is None and (run_dir / RUN_FILE).is_file():
            save_to = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8")).get("save_to")
        state = read_training_state(run_dir)
        total = steps if steps is not None else int(state.get("train_config", {}).get("steps", 0))
        if total <= int(state.get("step", 0)):
            raise JobError(f"run {name!r} is already at step {state.get('step')}; ask for more than "
                           f"{state.get('step')} steps to continue it")

        def build(callbacks: Sequence[TrainingCallback]) -> Trainer:
            return resume_trainer(run_dir, read_run_data(run_dir), callbacks, steps=total)

        self.start(name, build, run_dir=run_dir, total_steps=total, save_to=save_to)

    # ---- controlling --------------------------------------------------------------------------------
    def stop(self, name: str) -> None:
        """Ask the job to stop after its current step; it then saves `latest/` and can be resumed."""
        job = self._get(name)
        if job is None:
            return
        job.stop_event.set()
        with job.lock:
            if job.status in ("preparing", "running"):
                job.status = "stopping"

    def save(self, name: str, target: str | Path) -> str:
        """Save the job's model to `target`: at the next step while it trains, else from its run's `latest/`.

        Returns "queued" or "saved".
        """
        job = self._get(name)
        target = Path(target)
        if job is None:
            raise JobError(f"no run named {name!r} in this process")
        with job.lock:
            if job.status in ("preparing", "running"):
                job.save_requests.append(target)
                return "queued"
            if job.status == "stopping":
                raise JobError(f"run {name!r} is stopping; save it once it has stopped")
            run_dir = job.run_dir
        path = export_run(run_dir, target)
        step = read_training_state(run_dir).get("step", 0)
        with job.lock:
            job.saved.append((str(path), int(step)))
        return "saved"

    def forget(self, name: str) -> None:
        """Drop a finished, stopped or failed job from the list (its run directory stays)."""
        with self._lock:
            job = self._jobs.get(name)
            if job is not None and job.is_live():
                raise JobError(f"run {name!r} is still training; stop it first")
            self._jobs.pop(name, None)

    def attach(self, name: str, run_dir: str | Path) -> None:
        """Show a run found on disk (not trained in this process) without starting it: history and snapshots."""
        run_dir = Path(run_dir)
        state = read_training_state(run_dir)
        job = _Job(name, run_dir, None, int(state.get("train_config", {}).get("steps", 0)))
        job.step = job.resumed_from = int(state.get("step", 0))
        job.status = "stopped" if job.step < job.total_steps else "finished"
        job.history = {key: list(state.get("history", {}).get(key, [])) for key in HISTORY_KEYS}
        config = state.get("train_config", {})
        model = json.loads((run_dir / "latest" / "config.json").read_text(encoding="utf-8")).get("model", {})
        job.d_model, job.warmup_steps = model.get("d_model"), config.get("warmup_steps")
        job.lr_scale, job.sample_sentences = config.get("lr_scale", 1.0), tuple(config.get("sample_sentences", ()))
        job.elapsed_s = float(state.get("elapsed_s", 0.0))
        job.attention = [s for s in load_snapshots(run_dir) if s.step <= job.step]
        with self._lock:
            current = self._jobs.get(name)
            if current is None or not current.is_live():
                self._jobs[name] = job

    # ---- the thread ---------------------------------------------------------------------------------
    def _run(self, job: _Job, build: Builder) -> None:
        callback = _JobCallback(job)
        try:
            trainer = build([callback])
            result: TrainResult = trainer.run(stop=job.stop_event)
            if not result.stopped_early and job.save_to is not None:
                callback.save(job.save_to)
            while True:  # saves asked for during the last step; the status changes only when none is left
                with job.lock:
                    requests, job.save_requests = job.save_requests, []
                    if not requests:
                        job.step = result.step
                        job.status = "stopped" if result.stopped_early else "finished"
                        break
                for target in requests:
                    callback.save(target)
        except Exception as error:  # the page shows it; the thread must not die silently
            with job.lock:
                job.status = "failed"
                job.error = f"{type(error).__name__}: {error}"

