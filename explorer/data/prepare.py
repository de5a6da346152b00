"""Preparing a large uploaded corpus outside the server: reading and checking it, holding out validation pairs,
and training its SentencePiece vocabulary, each in a process of its own.

    python -m explorer.data.prepare corpus JOB_DIR
    python -m explorer.data.prepare tokenizer JOB_DIR --vocab N

Parsing 300,000 pairs and training a vocabulary on them takes the better part of a minute and some hundreds of
megabytes, which a long-running server would keep (its allocator rarely hands freed memory back). Here that
work runs in a short-lived process at lower priority, like a training run (explorer.training.worker), and the
server reads back only the result: the sentences and the vocabulary file.

A job is a folder named by the digest of the uploaded files (`start_corpus`), so every browser session, and a
session reloaded while the work goes on, finds the same job and its state. Each step (`corpus`,
`tokenizer-N`) reports through `<step>.json` (status, stage, progress, error); a step whose process died is
started again by the next `start_*`. A step that failed on the input (a `CorpusError`, a vocabulary too small)
stays failed with its message.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.background import start_detached
from explorer.data.corpus import CorpusError, ParallelCorpus, parallel_from_bytes, tsv_from_bytes
from explorer.training.datasets import split_off_validation

ROOT_ENV = "EXPLORER_PREPARE"
CORPUS = "corpus"
MAX_JOBS = 8  # job folders kept; older ones that are not working are removed when a new one starts
STALE_AFTER_S = 24 * 3600  # removed at server start-up when unused this long
_SPLITS = ("train", "val")


def prepare_root() -> Path:
    """Where jobs live: $EXPLORER_PREPARE, else a folder of this user's under the system's temporary folder."""
    env = os.environ.get(ROOT_ENV)
    return Path(env) if env else Path(tempfile.gettempdir()) / f"attention-explorer-prepare-{os.getuid()}"


def upload_digest(files: Sequence[tuple[str, bytes]]) -> str:
    """Names and contents of the uploaded files, as 16 hex digits: the job's name and the corpus's cache key."""
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:16]


def tokenizer_step(vocab: int) -> str:
    return f"tokenizer-{vocab}"


# ---- parsing (in the job's process, or in the server for a small upload) --------------------------------------
def parse_upload(files: Sequence[tuple[str, bytes]], max_bytes: int) -> tuple[ParallelCorpus, ParallelCorpus]:
    """Two aligned files (source, target) or one TSV, as (train, validation); CorpusError saying what is wrong."""
    if len(files) == 1:
        corpus = tsv_from_bytes(files[0][1], files[0][0], max_bytes)
    else:
        (src_name, src), (tgt_name, tgt) = files
        corpus = parallel_from_bytes(src, tgt, src_name, tgt_name, max_bytes)
    return split_off_validation(corpus)


# ---- the job's state ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepState:
    status: str  # "missing", "running", "done" or "failed"
    stage: str = ""  # what the process is doing now: "reading", "checking", "writing", "training"
    progress: float = 0.0  # 0..1, by stage
    error: str = ""
    started: float = 0.0
    crashed: bool = False  # the process died, or failed on something else than its input: starting again may help

    @property
    def running(self) -> bool:
        return self.status == "running"


def _write_atomic(path: Path, data: bytes) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.write_bytes(data)
    os.replace(staging, path)


def _write_state(job: Path, step: str, **state: Any) -> None:
    _write_atomic(job / f"{step}.json", json.dumps(state).encode("utf-8"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid(job: Path, step: str, raw: dict[str, Any]) -> int:
    """The step's process: as it wrote itself, else as its starter noted it (0 before either: taken as alive)."""
    if raw.get("pid"):
        return int(raw["pid"])
    try:
        return int((job / f"{step}.pid").read_text())
    except (OSError, ValueError):
        return 0


def step_state(job: Path, step: str) -> StepState:
    """The step's state from its file; a step whose process is gone without saying how it ended has failed."""
    try:
        raw = json.loads((job / f"{step}.json").read_text("utf-8"))
    except (OSError, ValueError):
        return StepState("missing")
    state = StepState(
        str(raw.get("status", "failed")),
        str(raw.get("stage", "")),
        float(raw.get("progress", 0.0)),
        str(raw.get("error", "")),
        float(raw.get("started", 0.0)),
        bool(raw.get("retry", False)),
    )
    if state.running and not _alive(_pid(job, step, raw)):
        return StepState("failed", error="the preparing process ended unexpectedly", crashed=True)
    return state


# ---- starting steps (the server's side) -----------------------------------------------------------------------
def start_corpus(files: Sequence[tuple[str, bytes]], max_bytes: int, root: Path | None = None) -> Path:
    """The job folder for these uploaded files, its corpus step started unless it is going or done."""
    root = root or prepare_root()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    job = root / upload_digest(files)
    if not (job / "request.json").is_file():
        prune(root, keep=MAX_JOBS - 1)
        job.mkdir(mode=0o700, exist_ok=True)
        for index, (_, data) in enumerate(files):
            _write_atomic(job / f"input-{index}", data)
        _write_atomic(
            job / "request.json", json.dumps({"names": [n for n, _ in files], "max_bytes": max_bytes}).encode()
        )
    _start(job, CORPUS, ())
    return job


def start_tokenizer(job: Path, vocab: int) -> None:
    """Train the job's vocabulary of (at most) `vocab` pieces, unless it is going or done."""
    _start(job, tokenizer_step(vocab), ("--vocab", str(vocab)))


def _start(job: Path, step: str, extra: tuple[str, ...]) -> None:
    state = step_state(job, step)
    os.utime(job)  # in use: not pruned
    if state.status in ("running", "done") or (state.status == "failed" and not state.crashed):
        return
    claim = job / f"{step}.claim"
    if state.crashed:
        (job / f"{step}.pid").unlink(missing_ok=True)
        claim.unlink(missing_ok=True)  # the process died: the next caller starts it again
    try:
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:  # another session starts this step at this moment
        return
    _write_state(job, step, status="running", stage="starting", progress=0.0, pid=0, started=time.time())
    kind = CORPUS if step == CORPUS else "tokenizer"
    # A session of its own: the work goes on when the server restarts or the page reloads.
    command = [sys.executable, "-m", "explorer.data.prepare", kind, str(job), *extra]
    process = start_detached(command, job / f"{step}.log", name=f"reap-{step}")
    (job / f"{step}.pid").write_text(str(process.pid))


# ---- reading results (the server's side) ----------------------------------------------------------------------
def _lines(path: Path) -> tuple[str, ...]:
    text = path.read_bytes().decode("utf-8")
    return tuple(text.split("\n")) if text else ()


def load_corpora(job: Path) -> tuple[ParallelCorpus, ParallelCorpus]:
    """(train, validation) as the corpus step wrote them."""
    meta = json.loads((job / "corpora.json").read_text("utf-8"))
    return tuple(  # type: ignore[return-value]
        ParallelCorpus(
            meta[split]["name"], _lines(job / f"{split}.src"), _lines(job / f"{split}.tgt"), meta[split]["dropped"]
        )
        for split in _SPLITS
    )


def tokenizer_path(job: Path, vocab: int) -> Path:
    return job / f"{tokenizer_step(vocab)}.model"


# ---- housekeeping ---------------------------------------------------------------------------------------------
def prune(root: Path | None = None, keep: int = MAX_JOBS, stale_after_s: float | None = None) -> list[Path]:
    """Remove job folders beyond the `keep` most recently used, and (at start-up) those unused for
    `stale_after_s`; a folder with a step at work stays. Returns the removed folders."""
    root = root or prepare_root()
    if not root.is_dir():
        return []
    jobs = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    now, removed = time.time(), []
    for rank, job in enumerate(jobs):
        too_many = rank >= keep
        stale = stale_after_s is not None and now - job.stat().st_mtime > stale_after_s
        steps = [CORPUS, *(p.stem for p in job.glob("tokenizer-*.json"))]
        busy = any(step_state(job, step).running for step in steps)
        if (too_many or stale) and not busy:
            shutil.rmtree(job, ignore_errors=True)
            removed.append(job)
    return removed


# ---- the job's process ----------------------------------------------------------------------------------------
def _reporter(job: Path, step: str, started: float) -> Any:
    def report(stage: str, progress: float) -> None:
        _write_state(job, step, status="running", stage=stage, progress=progress, pid=os.getpid(), started=started)

    return report


def _prepare_corpus(job: Path, started: float) -> None:
    report = _reporter(job, CORPUS, started)
    report("reading", 0.1)
    request = json.loads((job / "request.json").read_text("utf-8"))
    files = [(name, (job / f"input-{i}").read_bytes()) for i, name in enumerate(request["names"])]
    report("checking", 0.4)
    train, val = parse_upload(files, int(request["max_bytes"]))
    report("writing", 0.8)
    for split, corpus in zip(_SPLITS, (train, val), strict=True):
        _write_atomic(job / f"{split}.src", "\n".join(corpus.source).encode("utf-8"))
        _write_atomic(job / f"{split}.tgt", "\n".join(corpus.target).encode("utf-8"))
    meta = {split: {"name": c.name, "dropped": c.dropped} for split, c in zip(_SPLITS, (train, val), strict=True)}
    _write_atomic(job / "corpora.json", json.dumps(meta).encode("utf-8"))
    for index in range(len(files)):
        (job / f"input-{index}").unlink()  # the corpus is read: only its result is needed again


def _prepare_tokenizer(job: Path, vocab: int, started: float) -> None:
    from explorer.tokenizer import Tokenizer

    _reporter(job, tokenizer_step(vocab), started)("training", 0.5)
    sentences = _lines(job / "train.src") + _lines(job / "train.tgt")
    Tokenizer.train(sentences, vocab).save(tokenizer_path(job, vocab))  # as train_tokenizer does for text corpora


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorer.data.prepare", description=__doc__)
    parser.add_argument("kind", choices=(CORPUS, "tokenizer"))
    parser.add_argument("job", type=Path)
    parser.add_argument("--vocab", type=int, default=None, help="vocabulary size (the tokenizer step)")
    parser.add_argument("--nice", type=int, default=10, help="niceness added to this process")
    args = parser.parse_args(argv)
    from explorer.training.worker import lower_priority

    if args.nice:
        lower_priority(args.nice)
    step = CORPUS if args.kind == CORPUS else tokenizer_step(args.vocab)
    started = time.time()
    try:
        if args.kind == CORPUS:
            _prepare_corpus(args.job, started)
        else:
            _prepare_tokenizer(args.job, args.vocab, started)
    except (CorpusError, ValueError) as error:  # the input's fault: the page shows this sentence
        _write_state(args.job, step, status="failed", error=str(error), started=started, ended=time.time())
        return 2
    except Exception as error:  # not the input's fault: the traceback (with the server's paths) goes to the log only
        traceback.print_exc()
        message = f"preparing it failed unexpectedly ({type(error).__name__}); try again"
        _write_state(args.job, step, status="failed", error=message, retry=True, started=started, ended=time.time())
        return 1
    _write_state(args.job, step, status="done", progress=1.0, started=started, ended=time.time())
    return 0


if __name__ == "__main__":
    sys.exit(main())
