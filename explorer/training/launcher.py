"""Starting, stopping, saving and watching training runs, each in its own process (explorer.training.worker).

A `RunManager` holds no run state of its own: everything it knows it reads from the run folders under its
root (explorer.training.run_folder), so any number of managers (every browser session of the app, a server
restarted mid-run, `explorer runs` / `explorer stop` on the command line) agree on what exists and what it is
doing. Starting a run creates its folder exclusively (two people starting at once get two runs, and no
start ever deletes another run's folder), writes the corpus and spec, then starts the process:

    python -m explorer.training.worker RUN_DIR   at lower priority, with a bounded number of torch threads

Stop writes the stop-request file (the process checks it every step); a save while the process runs is a
request file it serves between two steps, and after the process ended it is done here from `latest/`. A save
never replaces a checkpoint another run made (explorer.training.saving.claim_target).

Every run has an owner, written into its run.json when it starts: the token of the browser session that
started it, or `CLI_OWNER`. A manager over a shared server (`shared=True`: a class on one machine) lets only
the owner, and the command line, stop, resume, save or discard a run; the others see it read-only. On one
person's machine (`shared=False`) anyone may.
"""

from __future__ import annotations

import fcntl
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from explorer.background import start_detached
from explorer.config import ModelConfig
from explorer.data.corpus import ParallelCorpus
from explorer.devices import resolve_device
from explorer.tokenizer import Tokenizer
from explorer.training import run_folder as rf
from explorer.training.run_folder import CLI_OWNER, JobError, RunSnapshot, RunStatus
from explorer.training.train_config import TrainConfig
from explorer.training.worker import DEFAULT_NICE, default_threads, device_holder

DEFAULT_MAX_JOBS = 2


class RunManager:
    """The runs under `root`: at most `max_jobs` training at once, one at a time per GPU; on a `shared`
    server, each run controlled only by its owner (and the command line)."""

    def __init__(
        self,
        root: str | Path,
        *,
        max_jobs: int = DEFAULT_MAX_JOBS,
        threads: int | None = None,
        nice: int = DEFAULT_NICE,
        worker: tuple[str, ...] | None = None,
        shared: bool = False,
    ) -> None:
        """`worker` is the command that trains a run folder (default: this Python, `-m explorer.training.worker`);
        the fault-injection tests put a worker there that dies at a chosen moment."""
        if max_jobs < 1:
            raise ValueError(f"max_jobs must be at least 1, got {max_jobs}")
        self.root, self.shared = Path(root), shared
        self.max_jobs, self.threads, self.nice = max_jobs, threads or default_threads(), nice
        self.worker = worker or (sys.executable, "-m", "explorer.training.worker")

    # ---- reading ----------------------------------------------------------------------------------------
    def runs(self) -> list[RunStatus]:
        """Every run in the folder, newest first: training, finished, stopped, failed and crashed ones."""
        return rf.list_runs(self.root)

    def names(self) -> list[str]:
        return [run.path.name for run in self.runs()]

    def live_names(self) -> list[str]:
        return [run.path.name for run in self.runs() if run.live]

    def status(self, name: str) -> RunStatus | None:
        return rf.read_run(self.root / name) if (self.root / name).is_dir() else None

    def snapshot(self, name: str) -> RunSnapshot | None:
        return rf.read_snapshot(self.root / name) if (self.root / name).is_dir() else None

    def wait(self, name: str, timeout: float | None = None, poll_s: float = 0.1) -> RunSnapshot:
        """Block until the run's process has ended (or `timeout` seconds passed); for the CLI and tests."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            snap = self.snapshot(name)
            if snap is None:
                raise JobError(f"no run named {name!r} in {self.root}")
            if not snap.live or (deadline is not None and time.monotonic() > deadline):
                return snap
            time.sleep(poll_s)

    # ---- starting ---------------------------------------------------------------------------------------
    def start_new(
        self,
        name: str,
        *,
        model_config: ModelConfig,
        train_config: TrainConfig,
        tokenizer: Tokenizer,
        train: ParallelCorpus,
        val: ParallelCorpus | None,
        save_in: str | Path | None = None,
        replace: bool = False,
        metadata: dict[str, Any] | None = None,
        unique: bool = False,
        owner: str = CLI_OWNER,
        init_from: str | Path | None = None,
    ) -> str:
        """Create the run's folder (exclusively: `unique` picks "name-2" when the name is taken, else a taken
        name is refused), write its corpus, vocabulary and spec, and start its process. Returns the name.

        A finished run saves its model in the folder `save_in` under the run's own final name, so two runs
        started under one name save two models. `replace`: that save may replace a checkpoint of the name
        asked for (the person saw it and chose to); never one of the other name a taken name moved the run to.
        `owner`: who may control the run on a shared server (a browser session's token, or `CLI_OWNER`).
        `init_from`: a checkpoint whose weights the run starts from (continuing an imported or trained model on
        this corpus, with a fresh optimizer); `model_config` and `tokenizer` must then be that checkpoint's.
        """
        self._check_capacity(train_config.device)
        run_dir = rf.create_run_folder(self.root, name, unique=unique)
        replace = replace and run_dir.name == rf.validate_run_name(name)
        name = run_dir.name
        save_to = Path(save_in) / name if save_in is not None else None
        rf.write_run_data(run_dir, train, val)
        # Every file of the tokenizer: tokenizer.model, or an imported model's SentencePiece models and vocabularies
        # (read back by explorer.checkpoint.read_tokenizer, as from a checkpoint).
        for file_name, data in tokenizer.files().items():
            (run_dir / file_name).write_bytes(data)
        spec: dict[str, Any] = {
            "model_config": model_config.to_dict(),
            "train_config": train_config.to_dict(),
            "metadata": {**(metadata or {}), "run": name},
        }
        if init_from is not None:
            spec["init_from"] = str(Path(init_from).resolve())
        rf.write_json(run_dir / rf.SPEC_FILE, spec)
        # run.json last: a folder with it is a complete run (the listing ignores one without).
        rf.write_json(
            run_dir / rf.RUN_FILE,
            {
                "name": name,
                "created": time.time(),
                "save_to": str(save_to) if save_to is not None else None,
                "replace": str(save_to) if save_to is not None and replace else None,
                "owner": owner,
                "train_pairs": len(train),
                "val_pairs": len(val or ()),
            },
        )
        try:
            self._launch(run_dir, train_config.device, total_steps=train_config.steps)
        except JobError:
            shutil.rmtree(run_dir, ignore_errors=True)  # the folder this call made, nothing trained in it
            raise
        return name

    def resume(self, name: str, *, steps: int | None = None, by: str = CLI_OWNER) -> None:
        """Continue a stopped, crashed or failed run from its `latest/` checkpoint (weights, Adam moments, data
        position, random state); a run that crashed before its first checkpoint starts again from step 0.

        `steps` is the new total (default: the run's own); `by`: who asks (see `may_act`).
        """
        run = self.status(name)
        if run is None:
            raise JobError(f"no run named {name!r} in {self.root}")
        self._require_owner(run, by, "resume")
        if run.live:
            raise JobError(f"run {name!r} is already training; watch it, or stop it first")
        rf.require_run_data(run.path)
        total = steps or run.total_steps
        if run.checkpoint_step is not None and total <= run.checkpoint_step:
            raise JobError(
                f"run {name!r} is already at step {run.checkpoint_step}; ask for more than "
                f"{run.checkpoint_step} steps to continue it"
            )
        if run.checkpoint_step is None and not (run.path / rf.SPEC_FILE).is_file():
            raise JobError(f"run {name!r} has no checkpoint to resume from")
        self._launch(run.path, self._device_of(run.path), total_steps=total, steps=steps)

    def _device_of(self, run_dir: Path) -> str:
        for source in (run_dir / "latest" / "training.json", run_dir / rf.SPEC_FILE):
            config = (rf.read_json(source, {}) or {}).get("train_config")
            if config:
                return str(config.get("device", "auto"))
        return "auto"

    def _check_capacity(self, device: str, launching: str | None = None) -> None:
        """Refuse a start that would exceed the bound on runs, or share a GPU (with a message that says so)."""
        target = resolve_device(device)
        if target.type == "cuda":
            import torch

            index = target.index if target.index is not None else torch.cuda.current_device()
            holder = device_holder(f"cuda:{index}")
            if holder is not None:
                raise JobError(
                    f"the GPU (cuda:{index}) is busy training run {holder!r}: one run at a time per "
                    "GPU. Wait for it, stop it, or train this run on the CPU."
                )
        live = [name for name in self.live_names() if name != launching]
        if len(live) >= self.max_jobs:
            raise JobError(
                f"{len(live)} training runs are already going ({', '.join(live)}); at most "
                f"{self.max_jobs} run at once on this machine. Stop one or wait for it to finish."
            )

    @contextmanager
    def _launching(self) -> Iterator[None]:
        """One launch at a time per runs folder (across processes), so the bound on runs holds."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".launch.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def _launch(self, run_dir: Path, device: str, *, total_steps: int, steps: int | None = None) -> None:
        run_dir = run_dir.resolve()
        with self._launching():
            # Again, under the lock: two starts at once cannot both take the last slot.
            self._check_capacity(device, launching=run_dir.name)
            (run_dir / rf.STOP_FILE).unlink(missing_ok=True)
            (run_dir / rf.PID_FILE).unlink(missing_ok=True)
            rf.write_json(
                run_dir / rf.STATE_FILE, {"status": "preparing", "launched": time.time(), "total_steps": total_steps}
            )
            command = [*self.worker, str(run_dir), "--threads", str(self.threads), "--nice", str(self.nice)]
            if steps is not None:
                command += ["--steps", str(steps)]
            # PASSIVE: a lower-priority trainer never spins a core waiting for work.
            env = {"OMP_NUM_THREADS": str(self.threads), "OMP_WAIT_POLICY": "PASSIVE"}
            process = start_detached(command, run_dir / rf.LOG_FILE, name=f"reap-{run_dir.name}", env=env)
            (run_dir / rf.PID_FILE).write_text(f"{process.pid}\n")

    # ---- controlling ------------------------------------------------------------------------------------
    def may_act(self, run: RunStatus | RunSnapshot, by: str) -> bool:
        """Whether `by` (a browser session's token, or `CLI_OWNER`) may stop, resume, save or discard `run`:
        always on one person's machine; on a shared server only its owner and the command line."""
        return not self.shared or by in (CLI_OWNER, run.owner)

    def _require_owner(self, run: RunStatus, by: str, action: str) -> None:
        if not self.may_act(run, by):
            who = (
                "it was started from the command line, and on this shared server only the `explorer` command"
                if run.owner == CLI_OWNER
                else "it was started in another browser session, and on this shared server only that session "
                "(or the `explorer` command on the server)"
            )
            raise JobError(f"you cannot {action} run {run.path.name!r}: {who} may stop, resume, save or discard it")

    def stop(self, name: str, *, by: str = CLI_OWNER) -> bool:
        """Ask the run's process to stop after its current step (it then saves latest/, resumable).

        Returns False when the run was not training; JobError when `by` may not (see `may_act`)."""
        run = self.status(name)
        if run is None or not run.live:
            return False
        self._require_owner(run, by, "stop")
        (run.path / rf.STOP_FILE).write_text(f"{time.time()}\n")
        return True

    def save(self, name: str, target: str | Path, *, by: str = CLI_OWNER) -> str:
        """Save the run's model to `target`: after the current step while it trains ("queued"), else from its
        `latest/` checkpoint at once ("saved"). A save asked for while the run stops is not lost. A `target`
        that holds another run's checkpoint is not replaced: the save takes the next free name ("target-2"),
        listed in the run's saved.json (`RunSnapshot.saved`)."""
        from explorer.training.reporter import serve_requests_from_latest

        run = self.status(name)
        if run is None:
            raise JobError(f"no run named {name!r} in {self.root}")
        self._require_owner(run, by, "save")
        folder = run.path / rf.REQUESTS_DIR
        folder.mkdir(exist_ok=True)
        rf.write_json(folder / f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.json", {"target": str(target)})
        if self.status(name).live:  # type: ignore[union-attr]
            return "queued"
        # The process has ended (perhaps just now): whatever it did not take is done here.
        if run.checkpoint_step is None:
            for request in folder.glob("*.json"):
                request.unlink(missing_ok=True)
            raise JobError(f"run {name!r} has no checkpoint to save yet")
        serve_requests_from_latest(run.path)
        return "saved"

    def discard(self, name: str, *, by: str = CLI_OWNER) -> None:
        """Delete a run's folder (not while it trains); checkpoints it saved to the list stay."""
        run = self.status(name)
        if run is None:
            return
        self._require_owner(run, by, "discard")
        if run.live:
            raise JobError(f"run {name!r} is still training; stop it first")
        if run.path.resolve().parent == self.root.resolve():
            shutil.rmtree(run.path, ignore_errors=True)


def run_summary(run: RunStatus) -> dict[str, Any]:
    """A run as one JSON-able dict (`explorer runs --json`)."""
    return {
        "name": run.path.name,
        "status": run.status,
        "step": run.step,
        "total_steps": run.total_steps,
        "checkpoint_step": run.checkpoint_step,
        "resumable": run.resumable,
        "error": run.error,
        "path": str(run.path),
        "pid": run.pid,
        "started_by": "cli" if run.owner == CLI_OWNER else "browser",
    }


__all__ = ["CLI_OWNER", "DEFAULT_MAX_JOBS", "JobError", "RunManager", "RunSnapshot", "RunStatus", "run_summary"]
