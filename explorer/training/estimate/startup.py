"""A training process's own start, before its first step: a new interpreter at the worker's priority and
thread count importing torch, the training loop and what its first evaluation needs. Timed in a child process
started as the launcher starts one, and kept a while: each timing costs a torch import."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

STARTUP_FALLBACK_S = 5.0  # a training process's start when it cannot be timed (torch import, spawn)
STARTUP_MAX_AGE_S = 10 * 60  # a process start-up timed longer ago than this is timed again (the load moves)
_startup: dict[str, float] = {}  # "seconds" and "at" (time.monotonic()) of the last timing
_startup_lock = threading.Lock()


def worker_setup() -> tuple[int, int]:
    """(torch threads, niceness) of a training process (explorer.training.worker's defaults)."""
    from explorer.training.worker import DEFAULT_NICE, default_threads

    return default_threads(), DEFAULT_NICE


def forget_process_startup() -> None:
    """Time the next training process's start-up afresh (the machine's load has moved)."""
    with _startup_lock:
        _startup.clear()


def process_startup_s() -> float:
    """Seconds a training process takes to start and import torch and the training loop; the last timing is
    kept for `STARTUP_MAX_AGE_S`."""
    with _startup_lock:
        if _startup and time.monotonic() - _startup["at"] < STARTUP_MAX_AGE_S:
            return _startup["seconds"]
        seconds = _time_process_startup()
        _startup.update(seconds=seconds, at=time.monotonic())
        return seconds


def _time_process_startup() -> float:
    threads, nice = worker_setup()
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": "PASSIVE"}
    # What the worker loads before its first step: torch, the loop and its reporter, and Adam, whose first
    # construction imports torch's compiler stack (seconds), then what its first evaluation imports.
    code = (
        "import torch, explorer.training.trainer, explorer.training.reporter, explorer.checkpoint, "
        "explorer.inference, explorer.evaluation; p = torch.nn.Parameter(torch.zeros(2)); "
        "o = torch.optim.Adam([p]); p.sum().backward(); o.step()"
    )
    start = time.perf_counter()
    try:
        subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            check=True,
            timeout=120,
            preexec_fn=(lambda: os.nice(nice)) if nice else None,  # noqa: PLW1509 - no threads started
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return STARTUP_FALLBACK_S
    return time.perf_counter() - start
