"""Runs have an owner: on a shared server only the browser session that started a run (and the command line)
may stop, resume, save or discard it; on one person's machine anyone may. The runs here are "trained" by a
stand-in worker that only sleeps, so nothing trains and each test takes a fraction of a second."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from explorer.training.launcher import CLI_OWNER, JobError, RunManager, run_summary

SLEEPER = (sys.executable, "-c", "import time; time.sleep(60)")  # its command line names the run folder


@pytest.fixture
def runs(tmp_path, tiny_task):
    """A shared manager with one live run started by the session "alice"; the sleeper is killed afterwards."""
    manager = RunManager(tmp_path / "runs", worker=SLEEPER, shared=True)
    train, val, tokenizer, config = tiny_task
    from tests.tiny_task import tiny_train_config

    name = manager.start_new(
        "owned",
        model_config=config,
        train_config=tiny_train_config(steps=10),
        tokenizer=tokenizer,
        train=train,
        val=val,
        owner="alice",
    )
    yield manager, name
    end(manager, name)


def end(manager: RunManager, name: str) -> None:
    """Kill the sleeper this test started (by its pid) and wait until the folder says it is gone."""
    run = manager.status(name)
    if run is None or run.pid is None:
        return
    try:
        os.kill(run.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while manager.status(name).live:  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the stand-in worker did not die"
        time.sleep(0.05)


def test_the_owner_is_kept_in_the_run_folder(runs):
    manager, name = runs
    assert json.loads((manager.root / name / "run.json").read_text())["owner"] == "alice"
    assert manager.status(name).owner == "alice" and manager.snapshot(name).owner == "alice"
    assert run_summary(manager.status(name))["started_by"] == "browser"  # the token itself is not shown


def test_on_a_shared_server_only_the_owner_and_the_cli_may_act(runs):
    manager, name = runs
    snap = manager.snapshot(name)
    assert snap.live
    assert manager.may_act(snap, "alice") and manager.may_act(snap, CLI_OWNER)
    assert not manager.may_act(snap, "bob")
    with pytest.raises(JobError, match="started in another browser session.*only that session"):
        manager.stop(name, by="bob")
    with pytest.raises(JobError, match="cannot save"):
        manager.save(name, manager.root.parent / "checkpoints" / name, by="bob")
    assert not (manager.root / name / "stop").exists() and not list((manager.root / name).glob("requests/*.json"))
    assert manager.stop(name, by="alice")
    assert (manager.root / name / "stop").exists()

    end(manager, name)  # the run has ended (crashed: the sleeper saved nothing)
    for act in (lambda by: manager.resume(name, by=by), lambda by: manager.discard(name, by=by)):
        with pytest.raises(JobError, match="another browser session"):
            act("bob")
    assert (manager.root / name).is_dir()
    manager.discard(name)  # the command line may
    assert not (manager.root / name).exists()


def test_on_one_persons_machine_anyone_may_act(runs):
    manager, name = runs
    single = RunManager(manager.root, worker=SLEEPER)  # shared=False: the default
    assert single.may_act(single.snapshot(name), "bob")
    assert single.stop(name, by="bob") and (manager.root / name / "stop").exists()
    end(manager, name)
    single.discard(name, by="bob")
    assert not (manager.root / name).exists()


def test_a_run_without_an_owner_is_the_command_lines(tmp_path):
    """`explorer train` writes no run.json owner (nor do runs from before owners): only the CLI controls it
    on a shared server."""
    run_dir = tmp_path / "cli-run"
    run_dir.mkdir()
    (run_dir / "state.json").write_text(json.dumps({"status": "failed", "started": 1.0, "error": "x"}))
    shared = RunManager(tmp_path, shared=True)
    assert shared.status("cli-run").owner == CLI_OWNER
    with pytest.raises(JobError, match="started from the command line"):
        shared.discard("cli-run", by="bob")
    shared.discard("cli-run", by=CLI_OWNER)
    assert not Path(run_dir).exists()
