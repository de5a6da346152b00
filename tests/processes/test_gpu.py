"""One run at a time per GPU: the per-device lock the training process holds, and the message a second start
gets. (No GPU needed: the lock is a file, and the launcher's device check is pointed at "cuda:0".)"""

from __future__ import annotations

import pytest
import torch

from explorer.training import launcher, worker
from explorer.training.launcher import JobError, RunManager


@pytest.fixture
def locks(tmp_path, monkeypatch):
    monkeypatch.setenv(worker.LOCKS_ENV, str(tmp_path / "locks"))
    return tmp_path / "locks"


def test_the_device_lock_has_one_holder_and_is_freed_with_it(locks):
    held = worker.try_device_lock("cuda:0", "first-run")
    assert held is not None and worker.device_holder("cuda:0") == "first-run"
    assert worker.try_device_lock("cuda:0", "second-run") is None, "a second run must not share the GPU"
    assert worker.device_holder("cuda:1") is None  # another GPU is free
    held.close()  # what the kernel does when the process ends, however it ends
    assert worker.device_holder("cuda:0") is None
    again = worker.try_device_lock("cuda:0", "second-run")
    assert again is not None
    again.close()


def test_a_second_run_on_a_busy_gpu_is_refused_with_a_clear_message(tmp_path, locks, monkeypatch):
    monkeypatch.setattr(launcher, "resolve_device", lambda name: torch.device("cuda", 0))
    held = worker.try_device_lock("cuda:0", "lecture-demo")
    try:
        with pytest.raises(JobError, match=r"GPU \(cuda:0\) is busy training run 'lecture-demo': one run at a time"):
            RunManager(tmp_path / "runs")._check_capacity("cuda:0")
    finally:
        held.close()
    RunManager(tmp_path / "runs")._check_capacity("cuda:0")  # free again: no error
