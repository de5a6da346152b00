"""The training worker yields the CPU to the server even though it runs in a session of its own
(a training run never slows other users). On Linux with scheduler autogroups, niceness only orders
processes inside one session; the worker must lower its session group's weight as well."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

AUTOGROUP = Path("/proc/self/autogroup")


def _autogroups_enabled() -> bool:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1" and AUTOGROUP.exists()
    except OSError:
        return False


@pytest.mark.skipif(not _autogroups_enabled(), reason="this kernel has no scheduler autogroups")
def test_a_worker_in_its_own_session_lowers_its_autogroup_too():
    code = (
        "import os; from explorer.training.worker import lower_priority; lower_priority(7); "
        "print(os.getpriority(os.PRIO_PROCESS, 0), open('/proc/self/autogroup').read().split()[-1])"
    )
    # start_new_session, as the launcher starts it: a fresh autogroup, nice 0 before the call
    out = subprocess.run(
        [sys.executable, "-c", code], start_new_session=True, capture_output=True, text=True, check=True
    ).stdout.split()
    parent_nice = int(subprocess.run(["sh", "-c", "nice"], capture_output=True, text=True).stdout)
    assert int(out[0]) == min(19, parent_nice + 7)
    assert int(out[1]) == 7


def test_lowering_priority_never_fails_where_autogroups_are_missing(monkeypatch):
    import builtins

    from explorer.training import worker

    real_open = builtins.open
    niced = []

    def no_proc(path, *args, **kwargs):
        if str(path).startswith("/proc/"):
            raise FileNotFoundError(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_proc)
    monkeypatch.setattr(worker.os, "nice", niced.append)
    worker.lower_priority(3)
    assert niced == [3]
