"""A run just launched is not reported as crashed while its worker's command line cannot be read yet.

Right after `exec`, `/proc/<pid>/cmdline` reads empty until the kernel has set up the new image, so a pid whose
command line does not name the run folder is, within the start-up grace, the worker on its way rather than
another program (a fresh-clone test run under load saw a just-started run as crashed). Here the test process
stands in for such a worker: alive, and its command line does not name the folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from explorer.training import run_folder as rf


def _run_dir(tmp_path, launched: float, pid: int):
    run_dir = tmp_path / "just-launched"
    run_dir.mkdir()
    rf.write_json(run_dir / rf.STATE_FILE, {"status": "preparing", "launched": launched, "total_steps": 10})
    (run_dir / rf.PID_FILE).write_text(f"{pid}\n")
    return run_dir


def test_a_live_worker_whose_command_line_is_not_readable_yet_is_preparing(tmp_path):
    status = rf.read_run(_run_dir(tmp_path, time.time(), os.getpid()))
    assert status is not None and status.status == "preparing"


def test_after_the_grace_a_pid_running_another_program_is_a_crashed_run(tmp_path):
    status = rf.read_run(_run_dir(tmp_path, time.time() - 10 * rf.STARTING_GRACE_S, os.getpid()))
    assert status is not None and status.status == "crashed"


def test_a_worker_that_is_gone_is_crashed_even_just_after_the_launch(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    status = rf.read_run(_run_dir(tmp_path, time.time(), int(ended.stdout)))
    assert status is not None and status.status == "crashed"
