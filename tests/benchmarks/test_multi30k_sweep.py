"""The recipe sweep's driver (checkpoints/recipes/multi30k_sweep.py): its runs stop through their stop files at the
deadline and also when the driver itself is ended (a `timeout` once left eight training runs orphaned, holding
both cores for 40 minutes); a row that fails is started again once, without evaluations; a run stopped before
its first step-N save is still scored from latest/."""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from checkpoints.recipes import multi30k_sweep as sweep

REPO = Path(__file__).resolve().parents[2]

# Stands in for `explorer train`: makes its --out folder, fails at once when asked to (evaluations on), and
# otherwise runs until a stop file appears there, then leaves a mark.
FAKE_TRAIN = """
import pathlib, sys, time
args = sys.argv
out = pathlib.Path(args[args.index("--out") + 1]); out.mkdir(parents=True, exist_ok=True)
if "--eval-every" in args and args[args.index("--eval-every") + 1] != "0" and "fail" in out.name:
    sys.exit(3)
while not (out / "stop").exists():
    time.sleep(0.02)
(out / "stopped").write_text("after a full step")
"""


@pytest.fixture
def fake_train(monkeypatch):
    def command(name, args, evaluate):
        eval_every = str(args.eval_every) if evaluate else "0"
        return [sys.executable, "-c", FAKE_TRAIN, "--out", str(args.work / name), "--eval-every", eval_every]

    monkeypatch.setattr(sweep, "train_command", command)


def _args(tmp_path: Path) -> argparse.Namespace:
    return argparse.Namespace(work=tmp_path / "work", eval_every=1000)


def test_runs_stop_through_their_stop_files_at_the_deadline(tmp_path, fake_train):
    folders = sweep.train_until(["a", "b"], _args(tmp_path), time.time() + 1.0)
    assert folders == {"a": "a", "b": "b"}
    for name in folders.values():
        assert (tmp_path / "work" / name / "stopped").is_file()


def test_ending_the_driver_stops_its_runs(tmp_path, fake_train, monkeypatch):
    def interrupted(seconds):  # SIGTERM arrives while the driver waits for the deadline
        sweep._exit_on_signal(signal.SIGTERM, None)

    # The driver's own clock only: Popen.wait sleeps through the real time module.
    monkeypatch.setattr(sweep, "time", SimpleNamespace(time=time.time, sleep=interrupted))
    with pytest.raises(SystemExit) as ended:
        sweep.train_until(["a", "b"], _args(tmp_path), time.time() + 3600)
    assert ended.value.code == 128 + signal.SIGTERM
    for name in ("a", "b"):
        assert (tmp_path / "work" / name / "stopped").is_file(), "a run outlived the sweep that started it"
    assert signal.getsignal(signal.SIGTERM) is not sweep._exit_on_signal, "the handler is put back"


def test_a_failed_row_starts_again_once_without_evaluations(tmp_path, fake_train):
    folders = sweep.train_until(["fail", "ok"], _args(tmp_path), time.time() + 4.0)
    assert folders == {"fail": "fail-noeval", "ok": "ok"}
    assert (tmp_path / "work" / "fail-noeval" / "stopped").is_file()
    assert not (tmp_path / "work" / "fail" / "stopped").exists()


def test_a_run_without_step_saves_is_scored_from_latest(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(REPO / "checkpoints" / "toy-reverse", run / "latest")
    assert sweep.saves_of(run) == [run / "latest"]
    shutil.copytree(REPO / "checkpoints" / "toy-reverse", run / "step-0000150")
    shutil.copytree(REPO / "checkpoints" / "toy-reverse", run / "step-0000030")
    assert [p.name for p in sweep.saves_of(run)] == ["step-0000030", "step-0000150"]  # by step, then latest unused
