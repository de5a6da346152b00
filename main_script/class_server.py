"""The students' server of a lecture (`python app.py --class-port PORT`): a second `streamlit run` of the same app
on PORT, in shared mode, on the same data folder and so the same rooms database. The lecturer's server learns the
port from $EXPLORER_CLASS_PORT and points the room's join link and QR code at it (ui/room/panel.py).

Why a process: one Streamlit server runs every session's script in threads of one interpreter, so a class's
reruns queue in front of the projector's clicks (benchmarks/classroom.py measures it). The students' server
stops with the lecturer's: on Linux the kernel sends it SIGTERM when its parent exits.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

CLASS_PORT_OPTION = "--class-port"
CLASS_PORT_ENV = "EXPLORER_CLASS_PORT"
PORT_OPTION = "--server.port"
PR_SET_PDEATHSIG = 1  # prctl(2)


def without_class_port(argv: Sequence[str]) -> tuple[int | None, list[str]]:
    """(the class port if `--class-port N` / `--class-port=N` is given, the other options unchanged)."""
    port: int | None = None
    rest: list[str] = []
    items = iter(argv)
    for item in items:
        if item == CLASS_PORT_OPTION or item.startswith(CLASS_PORT_OPTION + "="):
            text = item.partition("=")[2] if "=" in item else next(items, "")
            port = _port(text)
        else:
            rest.append(item)
    return port, rest


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        sys.exit(f"{CLASS_PORT_OPTION} takes a port number from 1 to 65535, not {text!r}")
    return int(text)


def class_server_options(options: Sequence[str], port: int) -> list[str]:
    """The lecturer's `streamlit run` options with the port replaced by the class's."""
    kept: list[str] = []
    items = iter(options)
    for item in items:
        if item == PORT_OPTION:
            next(items, None)
        elif not item.startswith(PORT_OPTION + "="):
            kept.append(item)
    return [*kept, PORT_OPTION, str(port)]


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the lecturer's server (this process's parent) exits."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_class_server(server: Path, port: int, options: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start the students' server and tell this process's environment (the lecturer's server, after exec) its port."""
    os.environ[CLASS_PORT_ENV] = str(port)
    env = dict(os.environ, EXPLORER_SHARED="1")
    env.pop(CLASS_PORT_ENV)  # the students' own join links stay on their server
    command = [sys.executable, "-m", "streamlit", "run", str(server), *class_server_options(options, port)]
    return subprocess.Popen(command, env=env, preexec_fn=_die_with_parent)  # noqa: PLW1509 (fork-safe: one call)
