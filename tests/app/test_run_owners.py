"""The Train page with two browser sessions: a run's checkpoint is named after the run's own final name (two
sessions starting under one automatic name save two models), and on a shared server only the session that
started a run may stop, resume, save or discard it (the other sees it read-only); in single-user mode both may.

Runs here are "trained" by a stand-in worker that only sleeps: what is checked is the page and the run folder,
not training (tests/processes/test_run_checkpoints.py trains two runs to the end)."""

from __future__ import annotations

import functools
import json
import os
import signal
import sys

import pytest

from explorer.training.launcher import RunManager
from tests.apptest_helpers import open_page

PAGE = "pages/train.py"
SLEEPER = (sys.executable, "-c", "import time; time.sleep(60)")


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """The page's runs and checkpoints in tmp_path, its manager starting the sleeper; every sleeper this test
    started is killed (by its pid) at the end."""
    root, checkpoints = tmp_path / "runs", tmp_path / "checkpoints"
    checkpoints.mkdir()
    monkeypatch.setenv("EXPLORER_RUNS", str(root))
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoints))
    monkeypatch.setattr("ui.train.runs.RunManager", functools.partial(RunManager, worker=SLEEPER))
    manager = RunManager(root, worker=SLEEPER)
    yield manager
    for run in manager.runs():
        if run.live and run.pid:
            os.kill(run.pid, signal.SIGKILL)


def test_two_sessions_under_one_automatic_name_save_to_two_checkpoints(runs):
    first, second = (open_page(PAGE, state={"train_owner": owner}) for owner in ("alice", "bob"))
    for at in (first, second):
        at.segmented_control(key="train_view").set_value("new").run()
        assert not at.exception, at.exception
        assert at.text_input(key="train_name").value == "reverse-tiny"
    first.button(key="train_start").click().run()
    second.button(key="train_start").click().run()  # its page still offers "reverse-tiny", taken a moment ago
    assert not first.exception and not second.exception
    assert (first.session_state["train_run"], second.session_state["train_run"]) == ("reverse-tiny", "reverse-tiny-2")
    infos = {
        name: json.loads((runs.root / name / "run.json").read_text()) for name in ("reverse-tiny", "reverse-tiny-2")
    }
    checkpoints = runs.root.parent / "checkpoints"
    # Both used to say checkpoints/reverse-tiny: the second run's model replaced the first one's.
    assert {name: info["save_to"] for name, info in infos.items()} == {name: str(checkpoints / name) for name in infos}
    assert [(info["owner"], info["replace"]) for info in infos.values()] == [("alice", None), ("bob", None)]


def test_only_the_session_that_started_a_run_controls_it_on_a_shared_server(runs, tiny_task, monkeypatch):
    train, val, tokenizer, config = tiny_task
    from tests.tiny_task import tiny_train_config

    runs.start_new(
        "owned",
        model_config=config,
        train_config=tiny_train_config(),
        tokenizer=tokenizer,
        train=train,
        val=val,
        owner="alice",
    )
    monkeypatch.setenv("EXPLORER_SHARED", "1")
    owner, other = (open_page(PAGE, state={"train_owner": token}) for token in ("alice", "bob"))
    for at in (owner, other):
        assert not at.exception, at.exception
        assert at.selectbox(key="train_run").value == "owned"
    assert not owner.button(key="train_stop_owned").disabled and not owner.button(key="train_save_now_owned").disabled
    assert other.button(key="train_stop_owned").disabled and other.button(key="train_save_now_owned").disabled
    captions = " ".join(c.value for c in other.caption)
    assert "Started in another browser session" in captions and "only that session" in captions
    assert not any("another browser session" in c.value for c in owner.caption)

    monkeypatch.setenv("EXPLORER_SHARED", "0")  # one person's machine: every session may act
    other.run()
    assert not other.button(key="train_stop_owned").disabled
    other.button(key="train_stop_owned").click().run()
    assert not other.exception and not other.error, [e.value for e in other.error]
    assert (runs.root / "owned" / "stop").exists()


def test_single_user_mode_is_the_default_on_localhost(monkeypatch):
    from ui.train.runs import shared_server

    monkeypatch.delenv("EXPLORER_SHARED", raising=False)
    assert not shared_server()  # `python app.py`: no address given
    for address, shared in (("localhost", False), ("127.0.0.1", False), ("0.0.0.0", True), ("10.0.0.5", True)):
        monkeypatch.setattr("streamlit.get_option", lambda key, a=address: a if key == "server.address" else None)
        assert shared_server() is shared, address
    monkeypatch.setenv("EXPLORER_SHARED", "0")
    assert not shared_server()
