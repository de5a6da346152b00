"""How every command ends on an error: one line on stderr, status 2 for the user's mistakes, never a
traceback; a crafted checkpoint gets the same sentence from the CLI as from the Python API."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.checkpoint import CheckpointError, load_checkpoint
from explorer.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def crafted_checkpoint(reverse_checkpoint, tmp_path) -> Path:
    path = tmp_path / "crafted"
    shutil.copytree(reverse_checkpoint, path)
    data = json.loads((path / "config.json").read_text())
    data["model"]["vocab_size"] = 10**12
    (path / "config.json").write_text(json.dumps(data))
    return path


def _commands(checkpoint: Path, tmp_path: Path) -> list[list[str]]:
    (tmp_path / "src.txt").write_text("a b c\n")
    (tmp_path / "ref.txt").write_text("c b a\n")
    return [
        ["translate", "-c", str(checkpoint), "a b c"],
        ["info", "-c", str(checkpoint)],
        [
            "evaluate",
            "-c",
            str(checkpoint),
            "--source",
            str(tmp_path / "src.txt"),
            "--reference",
            str(tmp_path / "ref.txt"),
        ],
        ["export", str(checkpoint), "--to", str(tmp_path / "exported")],
    ]


def test_crafted_checkpoint_same_sentence_in_cli_and_api(crafted_checkpoint, tmp_path, capsys):
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(crafted_checkpoint)
    sentence = str(caught.value)
    assert "vocab_size must be a whole number from 5 to 1,000,000" in sentence
    for args in _commands(crafted_checkpoint, tmp_path):
        assert main(args) == 2, args
        assert capsys.readouterr().err == f"error: {sentence}\n", args


def test_info_refuses_weights_that_disagree_with_the_config(reverse_checkpoint, tmp_path, capsys):
    path = tmp_path / "mismatch"
    shutil.copytree(reverse_checkpoint, path)
    data = json.loads((path / "config.json").read_text())
    data["model"]["d_ff"] *= 2
    (path / "config.json").write_text(json.dumps(data))
    assert main(["info", "-c", str(path)]) == 2
    assert "does not match config.json" in capsys.readouterr().err


def test_missing_files_are_one_line(tmp_path, capsys):
    code = main(["evaluate", "--hypotheses", str(tmp_path / "nope.txt"), "--reference", str(tmp_path / "ref.txt")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "ref.txt" in err and "No such file" in err
    code = main(["translate", "-c", str(tmp_path), "--input", str(tmp_path / "nope.txt")])
    assert code == 2 and capsys.readouterr().err.count("\n") == 1


def test_an_unexpected_error_is_one_line_with_status_1(monkeypatch, capsys):
    import explorer.paper

    def broken(*args, **kwargs):
        raise KeyError("surprise")

    monkeypatch.setattr(explorer.paper, "parameter_comparison", broken)
    monkeypatch.delenv("EXPLORER_DEBUG", raising=False)
    assert main(["info"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("internal error: KeyError: 'surprise'") and "EXPLORER_DEBUG=1" in err
    assert err.count("\n") == 1
    monkeypatch.setenv("EXPLORER_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["info"])


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["translate"],
        ["translate", "-c", "x", "--beam", "0"],
        ["translate", "-c", "x", "--alpha", "-1"],
        ["info", "--vocab", "many"],
    ],
)
def test_usage_mistakes_are_one_line(args, capsys):
    with pytest.raises(SystemExit) as exited:
        main(args)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and "error:" in err and "--help" in err


def test_beam_beyond_the_limit(reverse_checkpoint, capsys):
    assert main(["translate", "-c", str(reverse_checkpoint), "--beam", "1000", "a b"]) == 2
    assert "more than 64" in capsys.readouterr().err


def test_closed_pipe_ends_quietly(reverse_checkpoint, tmp_path):
    """`explorer translate ... | head -1`: the reader goes away; no traceback, no error."""
    (tmp_path / "in.txt").write_text("a b c\n" * 2000)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "explorer",
            "translate",
            "-c",
            str(reverse_checkpoint),
            "--beam",
            "1",
            "--batch-lines",
            "1",
            "--input",
            str(tmp_path / "in.txt"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO_ROOT,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and "Traceback" not in err, err
