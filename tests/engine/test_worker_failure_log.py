"""A launched worker that fails writes its traceback to its log before state.json says it failed: whoever sees
the failed state (the Train page, `explorer runs`, RunManager.wait) shows the log's last lines with the error,
and they were empty when the state came first (seen under load in a fresh-clone run)."""

from __future__ import annotations

import pytest

from explorer.training import run_folder as rf
from explorer.training.worker import failure_recorded


def test_the_traceback_is_in_the_log_before_the_state_says_failed(tmp_path, monkeypatch, capsys):
    logged_when_failed: list[str] = []
    write_json = rf.write_json

    def recording(path, value):
        if value.get("status") == "failed":
            logged_when_failed.append(capsys.readouterr().err)
        write_json(path, value)

    monkeypatch.setattr(rf, "write_json", recording)
    with pytest.raises(ValueError), failure_recorded(tmp_path, {"status": "running"}, log_traceback=True):
        raise ValueError("the model's vocabulary has 3 pieces but the model 6")
    [logged] = logged_when_failed
    assert "Traceback" in logged and "ValueError: the model's vocabulary" in logged
    state = rf.read_json(tmp_path / rf.STATE_FILE, {})
    assert state["status"] == "failed" and state["error"].startswith("ValueError: the model's vocabulary")


def test_in_the_command_s_own_process_the_error_goes_up_unprinted(tmp_path, capsys):
    with pytest.raises(ValueError), failure_recorded(tmp_path, {"status": "running"}):
        raise ValueError("shown once, by whoever catches it")
    assert "Traceback" not in capsys.readouterr().err
    assert rf.read_json(tmp_path / rf.STATE_FILE, {})["status"] == "failed"
