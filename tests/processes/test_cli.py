"""`explorer runs` and `explorer stop RUN` (explorer/cli/runs.py) over a runs folder the app could share."""

from __future__ import annotations

import argparse
import json
import time

import pytest

from explorer.cli import runs
from explorer.training.launcher import RunManager
from tests.tiny_task import tiny_train_config


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="explorer")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (runs, runs.stop):
        command.add_parser(sub).set_defaults(run=command.run)
    args = parser.parse_args(argv)
    return args.run(args)


def test_runs_lists_and_stop_stops_a_run_started_elsewhere(tmp_path, capsys, tiny_task):
    train, val, tokenizer, config = tiny_task
    app = RunManager(tmp_path)  # the app's server started it
    app.start_new(
        "lecture", model_config=config, tokenizer=tokenizer, train=train, val=val, train_config=tiny_train_config()
    )
    deadline = time.monotonic() + 180
    while app.snapshot("lecture").step < 3:
        assert time.monotonic() < deadline and app.snapshot("lecture").live, app.snapshot("lecture").log
        time.sleep(0.1)
    assert cli("runs", "--root", str(tmp_path)) == 0
    assert "lecture  running at step" in capsys.readouterr().out
    assert cli("stop", "lecture", "--root", str(tmp_path), "--wait") == 0
    out = capsys.readouterr().out
    assert "asked lecture to stop" in out and "lecture: stopped at step" in out
    assert cli("runs", "--root", str(tmp_path), "--json") == 0
    (listed,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (listed["status"], listed["resumable"]) == ("stopped", True)
    assert listed["checkpoint_step"] == listed["step"] >= 3


def test_stop_names_an_unknown_run(tmp_path):
    from explorer.cli.errors import UsageError

    with pytest.raises(UsageError, match="no run named 'nope'"):
        cli("stop", "nope", "--root", str(tmp_path))


COMMAND_LINE_RUN = """
import sys
from pathlib import Path
from explorer.training.trainer import Trainer
from explorer.training.worker import run_here
from tests.tiny_task import tiny_task, tiny_train_config
train, val, tokenizer, config = tiny_task()
trainer = Trainer(config, tiny_train_config(), tokenizer, train, val, Path(sys.argv[1]))
print(run_here(trainer).step)
"""


def test_a_command_line_run_is_listed_and_stopped_like_an_app_run(tmp_path, capsys):
    """`explorer train` (through `run_here`) reports through its folder: listed as running, stoppable."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, "-c", COMMAND_LINE_RUN, "cli-run"],
        cwd=tmp_path,
        text=True,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    try:
        manager = RunManager(tmp_path)
        deadline = time.monotonic() + 180
        while (run := manager.status("cli-run")) is None or run.step < 3:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)
        assert run.status == "running"
        assert cli("stop", "cli-run", "--root", str(tmp_path), "--wait") == 0
        assert int(process.communicate(timeout=120)[0].strip()) == manager.status("cli-run").step
        assert manager.status("cli-run").status == "stopped"
    finally:
        process.kill()
