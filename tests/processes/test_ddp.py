"""The trainer scales over processes with DistributedDataParallel: 2 CPU processes on gloo follow the same
loss curve as one process with the same global batch."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

COMMON = [
    "train",
    "--data",
    "reverse",
    "--preset",
    "tiny",
    "--dropout",
    "0",
    "--steps",
    "12",
    "--warmup",
    "5",
    "--eval-every",
    "0",
    "--save-every",
    "0",
    "--device",
    "cpu",
    "--quiet",
    "--seed",
    "3",
    "--log-every",
    "1",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _losses(run_dir: Path) -> list[float]:
    state = json.loads((run_dir / "latest" / "training.json").read_text())
    return state["history"]["loss"]


@pytest.mark.slow
def test_two_gloo_processes_match_one_process(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    single = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            *COMMON,
            "--batch-tokens",
            "1024",
            "--out",
            str(tmp_path / "single"),
            "--threads",
            "1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert single.returncode == 0, single.stderr
    ddp = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_addr",
            "127.0.0.1",
            "--master_port",
            str(_free_port()),
            "-m",
            "explorer",
            *COMMON,
            "--batch-tokens",
            "512",
            "--out",
            str(tmp_path / "ddp"),
            "--threads",
            "1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    one, two = _losses(tmp_path / "single"), _losses(tmp_path / "ddp")
    assert len(one) == len(two) == 12
    assert one == pytest.approx(two, rel=1e-3, abs=1e-3)
    assert two[-1] < two[0]
