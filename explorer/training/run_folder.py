"""The run folder: the only channel between a training process and whoever watches it (the app, the CLI).

The training process (explorer.training.worker) writes, and every reader only reads, these files; each is
written atomically (a synced temporary file, then a rename), so a reader or a process killed mid-write sees
the old file or the new one, never half of one:

    run.json                         name, creation time, owner, where the finished model is saved and whether
                                     it may replace a checkpoint of that name (written once)
    spec.json, tokenizer.model       what a fresh run builds: model and training config, metadata, vocabulary
    data/{train,val}.{src,tgt}       the exact corpus, one sentence per line (a run resumes without the upload)
    pid                              the training process's id, written by the launcher right after starting it
    state.json                       the process's status: running, then finished / stopped / failed (+ error)
    progress.json                    step, total, history (loss, LR, tokens/s, BLEU), elapsed and remaining time
    stop                             a stop request (from any browser session or `explorer stop`)
    requests/*.json                  save requests ("save a copy as checkpoint X"), done between two steps
    saved.json                       every model the run saved: [[path, step], ...]
    log.txt                          the process's stdout and stderr (its last lines explain a crash)
    latest/, step-N/, best/          the trainer's checkpoints (latest/ holds optimizer state: resumable)
    attention_snapshots.npz + .json  cross-attention of the watched sentences (explorer.training.snapshots)

A process that died (kill -9, out of memory) writes nothing more: `read_run` sees that its pid is gone while
state.json still says "running" and reports the run as crashed at its last reported step.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.checkpoint import is_checkpoint
from explorer.data.corpus import ParallelCorpus, read_parallel
from explorer.training.snapshots import SNAPSHOT_JSON, AttentionSnapshot, SnapshotError, load_snapshots, write_atomic

RUN_FILE, SPEC_FILE, TOKENIZER_FILE, DATA_DIR = "run.json", "spec.json", "tokenizer.model", "data"
PID_FILE, STATE_FILE, PROGRESS_FILE, STOP_FILE = "pid", "state.json", "progress.json", "stop"
REQUESTS_DIR, SAVED_FILE, LOG_FILE = "requests", "saved.json", "log.txt"
LIVE = ("preparing", "running", "stopping")
FINAL = ("finished", "stopped", "failed")
STARTING_GRACE_S = 60.0  # a folder without pid file this young is still being set up by its launcher
# Who started a run: a browser session's random token, or this, the command line (the machine's operator, who
# may act on every run); a run without an owner in its run.json (`explorer train`, older runs) counts as the CLI's.
CLI_OWNER = "cli"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class JobError(RuntimeError):
    """A run that cannot be started, resumed or saved; the message says why and what to do."""


def validate_run_name(name: str) -> str:
    """A run name doubles as a folder name under runs/ and checkpoints/: letters, digits, '.', '_', '-'."""
    name = name.strip()
    if not _NAME.match(name):
        raise JobError(
            f"run name {name!r} is not usable: use 1 to 64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


# ------------------------------------------------------------------------------------------------ files
def write_json(path: Path, value: Any) -> None:
    write_atomic(path, (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def read_json(path: Path, default: Any = None) -> Any:
    """The JSON in `path`, or `default` when it is missing or unreadable (every file here is replaced whole)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def create_run_folder(root: Path, name: str, *, unique: bool = False) -> Path:
    """Make `root/name` and return it; exclusive, so two starts at the same moment never share a folder.

    With `unique`, a taken name gets the first free suffix ("name-2", "name-3", ...) instead of an error.
    """
    root.mkdir(parents=True, exist_ok=True)
    base, n = validate_run_name(name), 1
    while True:
        candidate = base if n == 1 else f"{base[:60]}-{n}"
        try:
            (root / candidate).mkdir()  # atomic: exactly one caller creates it
            return root / candidate
        except FileExistsError:
            if not unique:
                raise JobError(
                    f"a run named {candidate!r} already exists in {root}; resume it, discard it, or choose another name"
                ) from None
            n += 1


def write_run_data(run_dir: Path, train: ParallelCorpus, val: ParallelCorpus | None) -> None:
    """Keep the run's exact corpus beside its checkpoints, so it can be resumed without the original upload."""
    data = run_dir / DATA_DIR
    data.mkdir(parents=True, exist_ok=True)
    for split, corpus in (("train", train), ("val", val)):
        for suffix, side in (("src", "source"), ("tgt", "target")):
            sentences = getattr(corpus, side) if corpus is not None else ()
            text = "\n".join(sentences) + "\n" if sentences else ""
            write_atomic(data / f"{split}.{suffix}", text.encode("utf-8"))


def require_run_data(run_dir: Path) -> Path:
    """The run's `data/` folder; JobError when the run was not started from the app (no corpus copy)."""
    data = Path(run_dir) / DATA_DIR
    if not (data / "train.src").is_file():
        raise JobError(
            f"{run_dir} has no {DATA_DIR}/ folder: it was not started from the train page; resume it "
            "with `explorer train --resume` instead"
        )
    return data


def read_run_data(run_dir: Path) -> tuple[ParallelCorpus, ParallelCorpus | None]:
    """The corpus written by `write_run_data`; no validation set when its file is empty."""
    data = require_run_data(run_dir)
    train = read_parallel(data / "train.src", data / "train.tgt")
    val = read_parallel(data / "val.src", data / "val.tgt") if (data / "val.src").stat().st_size > 1 else None
    return train, val


def recover_latest(run_dir: Path) -> None:
    """Undo what a kill in the middle of writing `latest/` can leave: the old copy moved aside (put it back
    when no new one took its place) and a half-written staging folder (delete it)."""
    latest = run_dir / "latest"
    for aside in sorted(run_dir.glob(".latest.old-*")):
        if not latest.exists() and is_checkpoint(aside):
            os.replace(aside, latest)
        else:
            shutil.rmtree(aside, ignore_errors=True)
    for staging in run_dir.glob(".latest.saving-*"):
        shutil.rmtree(staging, ignore_errors=True)


def log_tail(run_dir: Path, lines: int = 12, max_bytes: int = 16_384) -> str:
    """The last lines of the process's log (what it said before it died)."""
    path = Path(run_dir) / LOG_FILE
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - max_bytes))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    # tqdm and progress lines end in carriage returns; keep what a terminal would show.
    shown = [line.rsplit("\r", 1)[-1] for line in text.splitlines()]
    return "\n".join([line for line in shown if line.strip()][-lines:])


# ------------------------------------------------------------------------------------------- processes
def process_alive(pid: int | None, run_dir: Path | None = None) -> bool:
    """Whether `pid` is a live (not zombie) process; with `run_dir`, also one whose command line names that
    folder (by its name: `explorer train --out` may have been given a relative path), so a pid reused by
    another program after a reboot does not count."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    proc = Path(f"/proc/{pid}")
    if proc.is_dir():
        try:
            stat = (proc / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return False
            if run_dir is not None:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", errors="replace")
                return Path(run_dir).name in cmdline
        except (OSError, IndexError):
            return False
    return True


def read_pid(run_dir: Path) -> int | None:
    try:
        return int((run_dir / PID_FILE).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


# --------------------------------------------------------------------------------------------- listing
class _RunState:
    """What both views of a run (`RunStatus`, `RunSnapshot`) answer from the same three fields."""

    status: str
    checkpoint_step: int | None
    total_steps: int

    @property
    def live(self) -> bool:
        return self.status in LIVE

    @property
    def resumable(self) -> bool:
        return not self.live and self.checkpoint_step is not None and self.checkpoint_step < self.total_steps


@dataclass(frozen=True)
class RunStatus(_RunState):
    """What the folder says about a run, read cheaply (JSON only, no tensors)."""

    name: str
    path: Path
    status: str  # preparing, running, stopping, finished, stopped, failed, crashed
    step: int  # the last step the process reported
    total_steps: int
    checkpoint_step: int | None  # the step latest/ holds (None: nothing to resume from)
    created: float
    error: str | None
    pid: int | None
    owner: str  # CLI_OWNER, or the token of the browser session that started it

    @property
    def finished(self) -> bool:
        return self.status == "finished" or (self.checkpoint_step or 0) >= self.total_steps > 0

    def describe(self) -> str:
        """One line for a list: "crashed at step 120 of 600, can be resumed from step 100"."""
        text = f"{self.status} at step {self.step:,} of {self.total_steps:,}"
        if self.status == "crashed":
            text += (
                f", can be resumed from step {self.checkpoint_step:,}"
                if self.checkpoint_step is not None
                else ", before its first checkpoint"
            )
        return text


def latest_dir(run_dir: Path) -> Path | None:
    """The run's resumable checkpoint: `latest/`, or the copy a kill mid-write left moved aside (the training
    process puts that back with `recover_latest` before it resumes; readers only look)."""
    if is_checkpoint(run_dir / "latest"):
        return run_dir / "latest"
    return next((p for p in sorted(run_dir.glob(".latest.old-*")) if is_checkpoint(p)), None)


def checkpoint_step(run_dir: Path) -> int | None:
    latest = latest_dir(run_dir)
    if latest is None:
        return None
    state = read_json(latest / "training.json", {})
    return int(state.get("step", 0)) if isinstance(state, dict) else None


def read_run(run_dir: Path) -> RunStatus | None:
    """The status of the run in `run_dir`, or None when the folder holds no run."""
    run_dir = Path(run_dir)
    info = read_json(run_dir / RUN_FILE)
    state = read_json(run_dir / STATE_FILE, {}) or {}
    if not isinstance(info, dict):
        # A run of `explorer train` (state.json, written by `worker.run_here`), or from before the launcher
        # wrote run.json (latest/ is enough).
        if state:
            info = {"name": run_dir.name, "created": float(state.get("started", 0.0))}
        elif is_checkpoint(run_dir / "latest"):
            info = {"name": run_dir.name, "created": (run_dir / "latest").stat().st_mtime}
        else:
            return None
    progress = read_json(run_dir / PROGRESS_FILE, {}) or {}
    saved_step = checkpoint_step(run_dir)
    latest = latest_dir(run_dir)
    training = read_json(latest / "training.json", {}) if latest is not None else {}
    spec = read_json(run_dir / SPEC_FILE, {}) or {}
    total = int(
        state.get("total_steps")
        or progress.get("total_steps")
        or (training or {}).get("train_config", {}).get("steps")
        or spec.get("train_config", {}).get("steps")
        or 0
    )
    step = int(progress.get("step", saved_step or 0))
    pid = state.get("pid") or read_pid(run_dir)
    status = state.get("status")
    error = state.get("error")
    if status is None and not (run_dir / RUN_FILE).is_file():  # a folder `explorer train` wrote, long done
        status = "finished" if saved_step is not None and saved_step >= total > 0 else "stopped"
    if status not in FINAL:  # None, preparing, running or stopping: the process decides
        launched = float(state.get("launched", info.get("created", 0.0)))
        young = time.time() - launched < STARTING_GRACE_S
        if pid is None:
            status = "preparing" if young else ("stopped" if saved_step is not None else "crashed")
        elif not process_alive(pid, run_dir) and not (young and process_alive(pid)):
            # A live pid whose command line does not name the folder is another program, except just after the
            # launch: while the kernel sets up the worker's image its command line reads empty (a fresh-clone
            # test run saw a just-started run as crashed that way, under load).
            status = "crashed"
            error = error or "the training process ended without a word (killed, or out of memory)"
        elif status in (None, "preparing"):
            status = "preparing"
        else:
            status = "stopping" if (run_dir / STOP_FILE).exists() else "running"
    if status == "stopped" and saved_step is None:
        status = "crashed"
    return RunStatus(
        str(info.get("name", run_dir.name)),
        run_dir,
        str(status),
        step,
        total,
        saved_step,
        float(info.get("created", 0.0)),
        error,
        pid,
        str(info.get("owner") or CLI_OWNER),
    )


def list_runs(root: str | Path) -> list[RunStatus]:
    """Every run under `root`, newest first, whatever state it is in (crashed ones included)."""
    root = Path(root)
    if not root.is_dir():
        return []
    runs = [
        run
        for path in root.iterdir()
        if path.is_dir() and not path.name.startswith(".")
        if (run := read_run(path)) is not None
    ]
    return sorted(runs, key=lambda r: (-r.created, r.name))


# ------------------------------------------------------------------------------------------ full view
HISTORY_KEYS = ("step", "loss", "lr", "tokens_per_s", "eval_step", "val_loss", "val_bleu")


@dataclass(frozen=True)
class RunSnapshot(_RunState):
    """Everything the train page draws for one run, read from its folder; immutable (`history` lists are
    tuples), so a page redraw never sees a half-updated run."""

    name: str
    status: str  # preparing, running, stopping, finished, stopped, failed, crashed
    run_dir: Path
    step: int
    total_steps: int
    resumed_from: int
    elapsed_s: float
    history: dict[str, tuple[Any, ...]]
    attention: tuple[AttentionSnapshot, ...]
    saved: tuple[tuple[str, int], ...]  # (checkpoint folder, step) for every model this run saved
    error: str | None
    d_model: int | None
    warmup_steps: int | None
    lr_scale: float
    sample_sentences: tuple[str, ...]
    checkpoint_step: int | None  # what latest/ holds: where a resume starts
    eta: float | None  # seconds left at this process's pace, as the process last reported it
    log: str  # the last lines of the process's log (shown for a crashed or failed run)
    owner: str  # CLI_OWNER, or the token of the browser session that started it

    @property
    def progress(self) -> float:
        return min(1.0, self.step / self.total_steps) if self.total_steps else 0.0

    @property
    def tokens_per_s(self) -> float | None:
        rates = self.history.get("tokens_per_s", ())
        return rates[-1] if rates else None

    def eta_s(self) -> float | None:
        return self.eta if self.status == "running" else None


def read_snapshot(run_dir: Path) -> RunSnapshot | None:
    """The full view of the run in `run_dir` (None when it holds no run)."""
    run = read_run(run_dir)
    if run is None:
        return None
    progress = read_json(run_dir / PROGRESS_FILE, {}) or {}
    latest = latest_dir(run_dir)
    if not progress and latest is not None:  # a run from before progress.json, or from `explorer train`
        training = read_json(latest / "training.json", {}) or {}
        config = training.get("train_config", {})
        model = (read_json(latest / "config.json", {}) or {}).get("model", {})
        progress = {
            "history": training.get("history", {}),
            "elapsed_s": training.get("elapsed_s", 0.0),
            "resumed_from": run.checkpoint_step,
            "d_model": model.get("d_model"),
            "warmup_steps": config.get("warmup_steps"),
            "lr_scale": config.get("lr_scale", 1.0),
            "sample_sentences": config.get("sample_sentences", []),
        }
    history = progress.get("history", {})
    try:
        attention = tuple(s for s in _snapshots(run_dir) if s.step <= run.step)
    except SnapshotError:
        attention = ()
    saved = tuple((str(p), int(s)) for p, s in read_json(run_dir / SAVED_FILE, []) or [])
    show_log = run.status in ("crashed", "failed")
    return RunSnapshot(
        name=run.name,
        status=run.status,
        run_dir=run_dir,
        step=run.step,
        total_steps=run.total_steps,
        resumed_from=int(progress.get("resumed_from", 0)),
        elapsed_s=float(progress.get("elapsed_s", 0.0)),
        history={key: tuple(history.get(key, ())) for key in HISTORY_KEYS},
        attention=attention,
        saved=saved,
        error=run.error,
        d_model=progress.get("d_model"),
        warmup_steps=progress.get("warmup_steps"),
        lr_scale=float(progress.get("lr_scale", 1.0)),
        sample_sentences=tuple(progress.get("sample_sentences", ())),
        checkpoint_step=run.checkpoint_step,
        eta=progress.get("eta_s"),
        log=log_tail(run_dir) if show_log else "",
        owner=run.owner,
    )


def _snapshots(run_dir: Path) -> list[AttentionSnapshot]:
    """The run's attention snapshots, read again only when their file changed (the page polls every second)."""
    try:
        stat = (run_dir / SNAPSHOT_JSON).stat()
    except OSError:
        return []
    return _snapshots_cached(str(run_dir), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _snapshots_cached(run_dir: str, mtime_ns: int, size: int) -> list[AttentionSnapshot]:
    return load_snapshots(run_dir)
