"""A command that cannot write (a full disk, a read-only folder, a folder that is a file) ends with status 2 and
one sentence `error: <path>: <reason>`, like every other mistake, never `internal error`."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors import SafetensorError
from safetensors.torch import save_file as real_save_file

import explorer.checkpoint
from explorer.checkpoint import load_checkpoint, save_checkpoint
from explorer.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]


def _train(out: Path, data: str) -> list[str]:
    return ["train", "--data", data, "--out", str(out), "--steps", "1", "--eval-every", "0", "--save-every", "0",
            "--quiet"]  # fmt: skip


def _full_disk(tensors, filename, metadata=None):
    """safetensors' save_file on a full disk: it raises its own SafetensorError with the OS error's text."""
    raise SafetensorError(
        f'Error while serializing: I/O error: No space left on device (os error 28) at path "{filename}"'
    )


def test_train_on_a_full_disk_is_status_2_with_the_reason(monkeypatch, tmp_path, capsys, reversal_pairs):
    monkeypatch.setattr(explorer.checkpoint, "save_file", _full_disk)
    out = tmp_path / "run"
    assert main(_train(out, reversal_pairs)) == 2
    err = capsys.readouterr().err.splitlines()[-1]  # after the tokenizer's line
    assert err.startswith("error: "), err
    assert "No space left on device" in err and str(out) in err and "internal error" not in err
    assert ".saving-" not in err  # named by the checkpoint asked for, not the hidden staging folder


def test_export_on_a_full_disk_is_status_2(monkeypatch, reverse_checkpoint, tmp_path, capsys):
    monkeypatch.setattr(explorer.checkpoint, "save_file", _full_disk)
    target = tmp_path / "exported"
    assert main(["export", str(reverse_checkpoint), "--to", str(target)]) == 2
    assert capsys.readouterr().err == f"error: {target}: No space left on device\n"
    assert not target.exists() and not any(tmp_path.iterdir())  # no staging folder left behind


def test_a_real_safetensors_failure_becomes_an_os_error(reverse_checkpoint, tmp_path, monkeypatch):
    """The real library's failure (its folder vanished under it), not a made-up one: an OSError with its errno."""

    def vanishing(tensors, filename, metadata=None):
        gone = Path(filename).parent / "gone" / "model.safetensors"
        real_save_file(tensors, str(gone), metadata)

    monkeypatch.setattr(explorer.checkpoint, "save_file", vanishing)
    loaded = load_checkpoint(reverse_checkpoint)
    with pytest.raises(OSError) as caught:
        save_checkpoint(tmp_path / "copy", loaded.model, loaded.tokenizer)
    assert caught.value.errno == 2 and caught.value.filename == str(tmp_path / "copy")


def test_output_to_a_full_device_is_status_2(reverse_checkpoint):
    if not os.path.exists("/dev/full") or not stat.S_ISCHR(os.stat("/dev/full").st_mode):
        pytest.skip("no /dev/full character device on this system")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "explorer", "translate", "-c", str(reverse_checkpoint), "a b c"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            timeout=120,
        )
    assert done.returncode == 2
    assert done.stderr == "error: No space left on device\n"


@pytest.mark.parametrize("kind", ["under a file", "read-only"])
def test_train_into_a_folder_it_cannot_write_is_status_2(kind, tmp_path, capsys, reversal_pairs):
    if kind == "under a file":
        (tmp_path / "file").write_text("not a folder")
        out = tmp_path / "file" / "run"
    else:
        if os.geteuid() == 0:
            pytest.skip("running as root, which may write into a read-only folder; 'under a file' covers this case")
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        out = locked / "run"
    assert main(_train(out, reversal_pairs)) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("error: ") and "internal error" not in err, err


def test_a_tensor_dict_can_still_be_saved(tmp_path):
    """The wrapper leaves a working save alone."""
    explorer.checkpoint._save_tensors({"x": torch.ones(2)}, tmp_path / "x.safetensors")
    assert (tmp_path / "x.safetensors").stat().st_size > 0
