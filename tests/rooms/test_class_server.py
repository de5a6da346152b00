"""`python app.py --class-port PORT`: a second server for the students, on the same rooms database, that the
room's join link points at and that stops with the lecturer's server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from explorer.rooms import schema
from explorer.rooms.store import RoomStore
from main_script.class_server import class_server_options, without_class_port
from tests.browser.helpers import REPO, free_port
from tests.rooms.conftest import exercises
from ui.room.panel import phone_link


def test_the_class_port_is_taken_out_of_streamlits_options():
    assert without_class_port(["--class-port", "8502", "--server.port", "8501"]) == (8502, ["--server.port", "8501"])
    assert without_class_port(["--class-port=9000"]) == (9000, [])
    assert without_class_port(["--server.headless", "true"]) == (None, ["--server.headless", "true"])
    with pytest.raises(SystemExit, match="port number"):
        without_class_port(["--class-port", "eighty"])
    with pytest.raises(SystemExit, match="port number"):
        without_class_port(["--class-port", "70000"])


def test_the_students_server_keeps_every_option_but_the_port():
    options = ["--server.port", "8501", "--server.address", "0.0.0.0", "--server.port=8503"]
    assert class_server_options(options, 8502) == ["--server.address", "0.0.0.0", "--server.port", "8502"]


def test_the_join_link_points_at_the_students_server_on_the_host_the_lecturer_uses():
    page = "http://192.168.1.20:8501/tour?presenter=1&stop=4"
    assert phone_link(page, "ABCD2345") == "http://192.168.1.20:8501/join?room=ABCD2345"
    assert phone_link(page, "ABCD2345", "8502") == "http://192.168.1.20:8502/join?room=ABCD2345"
    under = "https://lecture.example.org:8443/explorer/tour"
    assert phone_link(under, "X", "9000") == "https://lecture.example.org:9000/explorer/join?room=X"
    assert phone_link("http://[::1]:8501/tour", "X", "8502") == "http://[::1]:8502/join?room=X"


def _healthy(port: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            time.sleep(0.5)
    return False


def _join_page(port: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/join?room=X", timeout=10) as response:
        return response.read()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the students' server stops with its parent on Linux")
def test_python_app_py_with_a_class_port_serves_both_and_stops_both(tmp_path):
    lecturer, students = free_port(), free_port()
    env = dict(os.environ, EXPLORER_RUNS=str(tmp_path / "runs"))
    command = [sys.executable, "app.py", "--class-port", str(students), "--server.port", str(lecturer)]
    command += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    server = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        assert _healthy(lecturer, deadline) and _healthy(students, deadline), "both servers answer"
        assert b"__streamlit" in _join_page(students), "the students' server serves the app's pages"
        # One rooms database: a room opened through the lecturer's data folder is the one phones join.
        store = RoomStore(schema.make_engine(f"sqlite:///{tmp_path / 'runs' / schema.SQLITE_FILE}"))
        room, _ = store.open_room("words-fixture", "a sentence", exercises())
        assert store.join(room.code, "phone-0001").code == room.code
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _healthy(students, time.monotonic() + 1):
        time.sleep(0.5)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{students}/_stcore/health", timeout=2)
