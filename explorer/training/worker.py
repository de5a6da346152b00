"""The training process: `python -m explorer.training.worker RUN_DIR` trains the run in RUN_DIR and reports
only through that folder (explorer.training.run_folder), so the app's server never trains a run.

It lowers its own priority (`os.nice`) and bounds torch's threads before any work, so a server on the same
machine keeps a core for the people browsing; it takes a lock per GPU (one run at a time per GPU); it checks
the stop-request file once per step and does the save requests it finds between two steps and after the
last one. A fresh run is built from spec.json; a run with a `latest/` checkpoint continues from it.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.training.reporter import FolderReporter
    from explorer.training.trainer import Trainer, TrainResult

DEFAULT_NICE = 10
LOCKS_ENV = "EXPLORER_LOCKS"


def default_threads() -> int:
    """Torch threads for a training process: all cores but one, so the server keeps one (at least 1)."""
    return max(1, (os.cpu_count() or 2) - 1)


def lock_dir() -> Path:
    """Where the per-GPU lock files live (machine-wide by default: every runs folder shares the GPU)."""
    return Path(os.environ.get(LOCKS_ENV) or Path(tempfile.gettempdir()) / "attention-explorer-locks")


def device_lock_path(device: str) -> Path:
    return lock_dir() / f"{device.replace(':', '-')}.lock"


def try_device_lock(device: str, owner: str) -> IO[str] | None:
    """An open, exclusively locked file for `device`, or None when another run holds it. The lock is the
    kernel's (flock): it goes away with the process, however that process ends."""
    path = device_lock_path(device)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open: the lock lives as long as the file
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(owner)
    handle.flush()
    return handle


def device_holder(device: str) -> str | None:
    """The run that holds `device`'s lock now, or None when it is free."""
    path = device_lock_path(device)
    if not path.exists():
        return None
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            return handle.read().strip() or "another run"
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


class StopFile:
    """The trainer's stop signal: set when the run folder holds a stop request, or on SIGTERM / SIGINT."""

    def __init__(self, path: Path) -> None:
        self.path, self.signalled = path, False

    def is_set(self) -> bool:
        return self.signalled or self.path.exists()

    def on_signal(self, signum: int, frame: Any) -> None:
        self.signalled = True


def lower_priority(nice: int) -> None:
    """Add `nice` to this process's niceness, and to its scheduling autogroup's where Linux has one.

    The launcher starts the worker in a session of its own (so a server restart does not kill it), and Linux
    with `kernel.sched_autogroup_enabled` shares the CPU between sessions before it looks at niceness: a niced
    process alone in its session would still get as much CPU as the whole server. Setting the autogroup's own
    nice value (proc(5), /proc/PID/autogroup) makes the run yield to the server as intended.
    """
    os.nice(nice)
    try:
        with open("/proc/self/autogroup") as f:
            current = int(f.read().split("nice")[1])
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(min(19, current + nice)))
    except (OSError, ValueError, IndexError):
        pass  # no autogroups here (another OS, or disabled): os.nice alone decides


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorer.training.worker", description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--steps", type=int, default=None, help="new total number of steps (resuming)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: cores - 1)")
    parser.add_argument("--nice", type=int, default=DEFAULT_NICE, help="niceness added to this process")
    args = parser.parse_args(argv)
    if args.nice:
        lower_priority(args.nice)
    threads = args.threads or default_threads()
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))

    import torch  # after the priority and thread settings: OpenMP reads them when torch loads

    torch.set_num_threads(threads)
    from explorer.training import run_folder as rf

    run_dir = args.run_dir.resolve()
    stop = StopFile(run_dir / rf.STOP_FILE)
    signal.signal(signal.SIGTERM, stop.on_signal)
    signal.signal(signal.SIGINT, stop.on_signal)
    state: dict[str, Any] = {"status": "running", "pid": os.getpid(), "started": time.time(), "threads": threads}
    rf.write_json(run_dir / rf.STATE_FILE, state)  # this pid, before the slow part: reading, building, resuming
    try:
        with failure_recorded(run_dir, state, log_traceback=True):
            train(run_dir, args.steps, stop, state)
    except Exception:  # the page shows the error from state.json, the traceback from log.txt
        return 1
    return 0


def train(run_dir: Path, steps: int | None, stop: StopFile, state: dict[str, Any]) -> TrainResult:
    """Build the trainer (fresh from spec.json, or from latest/), take the device's lock on a GPU, and train
    through `train_reported`, exporting the run where run.json says when it finishes."""
    from explorer.checkpoint import load_checkpoint, read_tokenizer
    from explorer.config import ModelConfig
    from explorer.devices import resolve_device
    from explorer.training import run_folder as rf
    from explorer.training.reporter import FolderReporter
    from explorer.training.trainer import TrainConfig, Trainer, resume_trainer

    rf.recover_latest(run_dir)
    spec = rf.read_json(run_dir / rf.SPEC_FILE, {}) or {}
    info = rf.read_json(run_dir / rf.RUN_FILE, {}) or {}
    corpora = rf.read_run_data(run_dir)
    reporter = FolderReporter(run_dir, str(info.get("name", run_dir.name)))
    if (run_dir / "latest").exists():
        trainer = resume_trainer(run_dir, corpora, [reporter], steps=steps)
    else:
        if not spec:
            raise rf.JobError(f"{run_dir} has neither a latest/ checkpoint nor a {rf.SPEC_FILE} to start from")
        train_config = TrainConfig.from_dict(spec["train_config"])
        if steps is not None:
            train_config = TrainConfig.from_dict({**train_config.to_dict(), "steps": steps})
        model_config = ModelConfig.from_dict(spec["model_config"])
        tokenizer = read_tokenizer(run_dir, model_config)
        trainer = Trainer(
            model_config,
            train_config,
            tokenizer,
            corpora[0],
            corpora[1],
            run_dir,
            [reporter],
            metadata=spec.get("metadata", {}),
        )
        if spec.get("init_from"):  # continue a checkpoint (an imported model, say) on this run's corpus
            trainer.load_initial_weights(load_checkpoint(spec["init_from"]).model)
    device = resolve_device(trainer.config.device)
    state.update(device=str(device), total_steps=trainer.config.steps)  # in the failed state too (lock held)
    lock = None
    if device.type == "cuda":
        name = f"cuda:{device.index if device.index is not None else torch_current_device()}"
        lock = try_device_lock(name, run_dir.name)
        if lock is None:
            raise rf.JobError(f"the GPU {name} is training run {device_holder(name)!r}; one run at a time per GPU")
    save_to = info.get("save_to")
    result = train_reported(trainer, reporter, stop, state, save_to=Path(save_to) if save_to else None)
    if lock is not None:
        lock.close()
    return result


def run_here(trainer: Trainer) -> TrainResult:
    """`trainer.run()` in this process, reporting through its run folder as a launched run does (state.json
    with this pid, progress.json, snapshots, the stop file), so `explorer runs` lists it and `explorer stop`
    stops it. For `explorer train`; under torchrun (several ranks) it is plain `trainer.run()`, since a stop
    file seen by one rank and not yet by another would leave the other waiting in its all-reduce."""
    from explorer.training import run_folder as rf
    from explorer.training.reporter import FolderReporter

    if trainer.run_dir is None or trainer.world > 1:
        return trainer.run()
    run_dir = trainer.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    reporter = FolderReporter(run_dir, run_dir.name)
    trainer.callbacks.append(reporter)
    (run_dir / rf.STOP_FILE).unlink(missing_ok=True)  # an old run's request, not this one's
    state: dict[str, Any] = {
        "status": "running",
        "pid": os.getpid(),
        "started": time.time(),
        "total_steps": trainer.config.steps,
        "device": str(trainer.device),
    }
    with failure_recorded(run_dir, state):
        return train_reported(trainer, reporter, StopFile(run_dir / rf.STOP_FILE), state)


def train_reported(
    trainer: Trainer, reporter: FolderReporter, stop: StopFile, state: dict[str, Any], *, save_to: Path | None = None
) -> TrainResult:
    """The one way a run trains in its folder, launched (`train`) or in the command's process (`run_here`):
    state.json says running (`state`: the pid, the device, the planned steps), the trainer runs until done or
    stopped, a finished run is exported to `save_to`, and state.json says how it ended, at which step; save
    requests are served up to the end, also one that came while the final state was written."""
    from explorer.training import run_folder as rf

    run_dir = reporter.run_dir
    rf.write_json(run_dir / rf.STATE_FILE, state)
    result = trainer.run(stop=stop)
    if not result.stopped_early and save_to is not None:
        reporter.save(save_to)
    reporter.serve_requests()
    status = "stopped" if result.stopped_early else "finished"
    rf.write_json(run_dir / rf.STATE_FILE, {**state, "status": status, "step": result.step, "ended": time.time()})
    reporter.serve_requests()
    return result


@contextmanager
def failure_recorded(run_dir: Path, state: dict[str, Any], *, log_traceback: bool = False) -> Iterator[None]:
    """On an error in the block, state.json says the run failed, and with what (the app and `explorer runs`
    show it), before the error goes on up. With `log_traceback` (a launched worker, whose stderr is log.txt) the
    traceback is written and flushed first: whoever sees the failed state shows the log's last lines with it."""
    from explorer.training import run_folder as rf

    try:
        yield
    except BaseException as error:
        if log_traceback and isinstance(error, Exception):
            traceback.print_exc()
            sys.stderr.flush()
        rf.write_json(
            run_dir / rf.STATE_FILE,
            {**state, "status": "failed", "ended": time.time(), "error": f"{type(error).__name__}: {error}"},
        )
        raise


def torch_current_device() -> int:
    import torch

    return torch.cuda.current_device()


if __name__ == "__main__":
    sys.exit(main())
