"""Fault injection for the training process: kill -9 during a step, before the first checkpoint, during a
checkpoint write, and a server restarted mid-run. Nothing written before the fault is lost, and a fresh
listing of the runs folder says what happened (crashed at step N, resumable from step M)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.training.launcher import RunManager
from explorer.training.run_folder import list_runs
from tests.tiny_task import tiny_train_config

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def start(manager: RunManager, name: str, task, **overrides) -> str:
    train, val, tokenizer, config = task
    options = dict(eval_every=7, save_every=3, keep_last=1, sample_sentences=(val.source[0],))
    options.update(overrides)
    return manager.start_new(
        name, model_config=config, train_config=tiny_train_config(**options), tokenizer=tokenizer, train=train, val=val
    )


def wait_for(predicate, timeout: float = 180, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def kill(manager: RunManager, name: str) -> None:
    os.kill(manager.status(name).pid, signal.SIGKILL)
    wait_for(lambda: manager.status(name).status == "crashed", 30, "the listing to see the crash")


def test_kill_9_during_a_step_keeps_everything_written_and_resumes(tmp_path, tiny_task):
    manager = RunManager(tmp_path)
    start(manager, "killed", tiny_task)
    wait_for(lambda: manager.snapshot("killed").step >= 30, what="step 30")
    kill(manager, "killed")

    fresh = RunManager(tmp_path)  # what a restarted server sees
    (run,) = fresh.runs()
    assert run.status == "crashed" and run.step >= 30 and run.resumable
    assert run.checkpoint_step is not None and run.checkpoint_step % 3 == 0 and run.step - run.checkpoint_step < 6
    assert "crashed at step" in run.describe() and f"resumed from step {run.checkpoint_step:,}" in run.describe()
    snap = fresh.snapshot("killed")
    assert snap.history["step"][-1] >= 30 and [s.step for s in snap.attention][:3] == [0, 7, 14]
    assert "killed, or out of memory" in snap.error
    load_checkpoint(tmp_path / "killed" / "latest")  # whole and loadable

    fresh.resume("killed", steps=run.checkpoint_step + 4)
    resumed = fresh.wait("killed", 180)
    assert resumed.status == "finished", (resumed.error, resumed.log)
    assert (resumed.resumed_from, resumed.step) == (run.checkpoint_step, run.checkpoint_step + 4)
    assert [s.step for s in resumed.attention][:3] == [0, 7, 14]  # snapshots written before the kill


def test_kill_9_before_the_first_checkpoint_is_listed_and_can_start_again(tmp_path, tiny_task):
    manager = RunManager(tmp_path)
    start(manager, "early", tiny_task, save_every=0, eval_every=0)
    wait_for(lambda: manager.snapshot("early").step >= 2, what="step 2")
    kill(manager, "early")
    (run,) = RunManager(tmp_path).runs()
    assert (run.name, run.status, run.checkpoint_step) == ("early", "crashed", None)
    assert run.describe().endswith("before its first checkpoint")
    manager.resume("early", steps=5)  # starts again from step 0, from the spec the folder keeps
    again = manager.wait("early", 180)
    assert (again.status, again.step, again.resumed_from) == ("finished", 5, 0)


# A worker that SIGKILLs itself in the middle of its second write of latest/: after the new weights are on
# disk in the staging folder and the old latest/ has been moved aside, before the new one takes its place.
FAULTY_WORKER = """
import os, signal, sys
writes = {"latest": 0}
real_replace = os.replace

def replace(source, target):
    source, target = str(source), str(target)
    if os.path.basename(target) == "latest" and ".latest.saving-" in source:
        writes["latest"] += 1
        if writes["latest"] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(source, target)

os.replace = replace
from explorer.training.worker import main
sys.exit(main())
"""


def test_kill_9_during_a_checkpoint_write_keeps_the_previous_checkpoint(tmp_path, tiny_task):
    script = tmp_path / "faulty_worker.py"
    script.write_text(textwrap.dedent(FAULTY_WORKER))
    manager = RunManager(tmp_path / "runs", worker=(sys.executable, str(script)))
    start(manager, "torn", tiny_task, save_every=5)
    wait_for(lambda: manager.status("torn").status == "crashed", what="the worker to die mid-write")
    run_dir = tmp_path / "runs" / "torn"
    assert not (run_dir / "latest").exists(), "the fault must hit between the two renames"
    (run,) = list_runs(tmp_path / "runs")  # the listing finds the copy moved aside
    assert run.status == "crashed" and run.checkpoint_step == 5 and run.step >= 5
    RunManager(tmp_path / "runs").resume("torn", steps=12)  # the real worker puts the old latest/ back first
    resumed = manager.wait("torn", 180)
    assert (resumed.status, resumed.resumed_from, resumed.step) == ("finished", 5, 12), resumed.log
    assert not list(run_dir.glob(".latest.*"))


SERVER = """
import sys
from pathlib import Path
from explorer.training.launcher import RunManager
from tests.tiny_task import tiny_task, tiny_train_config
train, val, tokenizer, config = tiny_task()
RunManager(Path(sys.argv[1])).start_new("survivor", model_config=config, tokenizer=tokenizer, train=train, val=val,
                                        train_config=tiny_train_config(save_every=4))
"""


def test_a_server_restart_mid_run_lists_the_run_and_can_stop_it(tmp_path):
    """The process that started the run exits; the run goes on, and a fresh manager sees and stops it."""
    done = subprocess.run(
        [sys.executable, "-c", SERVER, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    restarted = RunManager(tmp_path)
    wait_for(lambda: restarted.snapshot("survivor").step >= 10, what="the run to go on after its server left")
    (run,) = restarted.runs()
    assert run.status == "running" and run.live
    assert restarted.stop("survivor")
    stopped = restarted.wait("survivor", 120)
    assert stopped.status == "stopped" and stopped.checkpoint_step == stopped.step >= 10
