"""Starting the engine's own background processes (a training run, an upload's preparation): detached from the
server, so they outlive a page reload, a server restart and a Ctrl-C in the server's terminal, and reaped when
they end, so none lingers as a zombie of the process that started it."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def start_detached(
    command: Sequence[str], log: Path, *, name: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Run `command` from the repository root in a session of its own, its output appended to `log`, with the
    repository first on PYTHONPATH (so `python -m explorer…` imports this tree) and `env` added to the
    environment; a daemon thread called `name` waits for it."""
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    with open(log, "ab") as out:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {}), "PYTHONPATH": path},
            cwd=REPO_ROOT,
            start_new_session=True,
        )
    threading.Thread(target=process.wait, name=name, daemon=True).start()
    return process
