"""Runtime settings belong to the entry points: importing the library leaves the environment alone,
and `explorer.runtime.configure_for` sets the measured choice only where the user has not."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from explorer.runtime import configure_for, settings_for

_SNAPSHOT = (
    "import json, os, sys; before = dict(os.environ); import {module}; "
    "print(json.dumps({{'added': sorted(set(os.environ) - set(before)), "
    "'changed': sorted(k for k in before if os.environ.get(k) != before[k])}}))"
)


@pytest.mark.parametrize("module", ["explorer", "explorer.inference", "explorer.decoding"])
def test_importing_explorer_leaves_the_environment_unchanged(module):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    done = subprocess.run(
        [sys.executable, "-c", _SNAPSHOT.format(module=module)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == {"added": [], "changed": []}


def test_configure_for_sets_the_measured_setting_before_torch_loads():
    code = (
        "import json, os; from explorer.runtime import configure_for, LAST_LOAD; configure_for('cli'); "
        "print(json.dumps({'env': {k: os.environ.get(k) for k in ('OMP_WAIT_POLICY', 'OMP_NUM_THREADS')}, "
        "'load': LAST_LOAD[0]}))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    done = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=120
        ).stdout
    )
    expected = settings_for("cli", done["load"])
    assert {k: v for k, v in done["env"].items() if v is not None} == expected


def test_the_command_line_spins_only_when_cores_are_free_and_the_app_runs_one_thread_per_request_when_busy():
    assert settings_for("cli", 0.3) == {"OMP_WAIT_POLICY": "ACTIVE"}
    assert settings_for("cli", 3.0) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert settings_for("app", 3.0) == {"OMP_NUM_THREADS": "1"}
    assert settings_for("app", 0.3) == {}, "quiet: the OpenMP defaults, a thread per core for oneDNN to split over"


def test_configure_for_keeps_what_the_user_set(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "SOMETHING_THE_USER_CHOSE")
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    assert configure_for("app") == {} and configure_for("cli") == {}
    assert os.environ["OMP_WAIT_POLICY"] == "SOMETHING_THE_USER_CHOSE" and os.environ["OMP_NUM_THREADS"] == "7"


def test_configure_for_rejects_unknown_workloads():
    with pytest.raises(ValueError, match="workload"):
        configure_for("nonsense")


def test_configure_for_sets_nothing_when_asked_to_leave_the_runtime_as_given(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("EXPLORER_RUNTIME", "as-given")
    assert configure_for("cli") == {}
    assert "OMP_WAIT_POLICY" not in os.environ and "OMP_NUM_THREADS" not in os.environ


def test_a_high_load_average_with_idle_cores_is_not_busy(monkeypatch):
    """A minute of one's own earlier work leaves the load average high on an idle machine: the command that
    follows must still spin (ACTIVE), and only a load both the average and the runnable tasks show is busy."""
    from explorer import runtime

    cores = os.cpu_count() or 1
    monkeypatch.setattr(runtime.os, "getloadavg", lambda: (3.0 * cores, 1.0, 0.5))
    monkeypatch.setattr(runtime, "runnable_per_core", lambda: 0.0)
    assert (
        runtime.load_per_core() == 0.0 and settings_for("cli", runtime.load_per_core())["OMP_WAIT_POLICY"] == "ACTIVE"
    )
    monkeypatch.setattr(runtime, "runnable_per_core", lambda: 2.5)
    assert (
        runtime.load_per_core() == 2.5 and settings_for("cli", runtime.load_per_core())["OMP_WAIT_POLICY"] == "PASSIVE"
    )
    monkeypatch.setattr(runtime.os, "getloadavg", lambda: (0.1 * cores, 0.1, 0.1))
    assert runtime.load_per_core() == pytest.approx(0.1), "a blip of runnable tasks on a quiet minute is not busy"
    monkeypatch.setattr(runtime, "runnable_per_core", lambda: None)  # no /proc/stat: the average alone
    assert runtime.load_per_core() == pytest.approx(0.1)


def test_runnable_tasks_are_read_from_proc_stat():
    from explorer import runtime

    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat on this system")
    found = runtime.runnable_per_core()
    assert found is not None and 0.0 <= found < 1000


def test_the_allocator_is_left_alone_where_the_user_chose(monkeypatch):
    from explorer.runtime import configure_allocator

    monkeypatch.setenv("EXPLORER_RUNTIME", "as-given")
    assert configure_allocator() is False
    monkeypatch.delenv("EXPLORER_RUNTIME")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert configure_allocator() is False


FEWER_FAULTS = 1.3  # the least ratio of unconfigured to configured faults measured, Intel and AMD alike


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_beam_search_stops_faulting_pages_with_the_entry_points_allocator():
    """Beam 4 over batches of 32 freed a 12-25 MiB self-attention cache every step, and glibc handed the top of
    its heap back to the system and faulted it in again. With the thresholds `configure_allocator` fixes, the
    shipped 10,000-piece model faults 29-61 times a sentence on these 96 sentences against 206-428 without
    (ratios 3.9-9.5 over ten pairs of runs). The configured faults are first touches while the heap
    grows to its peak: 1,764, then 73, then 7 in three successive batches of 32 in one process, so a run of 96
    sentences varies with how much of it that growth is. On an AMD EPYC, where the matrix kernels are oneDNN's, the
    configured process faults more (about 200-220 a sentence against 340-530: ratios 1.5-2.4 over three pairs).
    A factor of 1.3 holds in every pair measured on both and fails where the thresholds do not apply (a ratio
    near 1). Same translations either way; each setting in its own process."""
    from benchmarks.probes.allocator import CHECKPOINT, run_child
    from explorer.data import multi30k_available

    if not multi30k_available():
        pytest.skip("Multi30k is absent (../shared/data/multi30k)")
    if not (CHECKPOINT / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint is absent")
    pairs = []
    # A second pair where the first misses: once in a full suite run on a busy 2-core machine the configured
    # process faulted like an unconfigured one (267 against 339 a sentence); a lost setting misses in both.
    for _ in range(2):
        on, off = run_child("on", 96), run_child("off", 96)
        assert on["configured"] and not off["configured"]
        assert on["outputs"] == off["outputs"]
        beam_on, beam_off = (run["cells"]["beam 4, batches of 32"]["faults_per_sentence"] for run in (on, off))
        pairs.append((beam_on, beam_off))
        if beam_on * FEWER_FAULTS < beam_off:
            break
    assert beam_on * FEWER_FAULTS < beam_off, pairs
