"""Runtime settings belong to the entry points: importing the library leaves the environment alone
(issue 14.7), and `explorer.runtime.configure_for` sets the measured choice only where the user has not."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from explorer.runtime import SETTINGS, configure_for

_SNAPSHOT = "import json, os, sys; before = dict(os.environ); import {module}; " \
            "print(json.dumps({{'added': sorted(set(os.environ) - set(before)), " \
            "'changed': sorted(k for k in before if os.environ.get(k) != before[k])}}))"


@pytest.mark.parametrize("module", ["explorer", "explorer.inference", "explorer.decoding"])
def test_importing_explorer_leaves_the_environment_unchanged(module):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    done = subprocess.run([sys.executable, "-c", _SNAPSHOT.format(module=module)], env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    assert json.loads(done.stdout) == {"added": [], "changed": []}


def test_configure_for_sets_the_measured_setting_before_torch_loads():
    code = ("import json, os; from explorer.runtime import configure_for; configure_for('cli'); "
            "print(json.dumps({k: os.environ.get(k) for k in ('OMP_WAIT_POLICY', 'OMP_NUM_THREADS')}))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                          timeout=120)
    assert json.loads(done.stdout) == {k: SETTINGS["cli"].get(k) for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")}


def test_configure_for_keeps_what_the_user_set(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "SOMETHING_THE_USER_CHOSE")
    configure_for("app")
    assert os.environ["OMP_WAIT_POLICY"] == "SOMETHING_THE_USER_CHOSE"


def test_configure_for_rejects_unknown_workloads():
    with pytest.raises(ValueError, match="workload"):
        configure_for("nonsense")


def test_configure_for_sets_nothing_when_asked_to_leave_the_runtime_as_given(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("EXPLORER_RUNTIME", "as-given")
    assert configure_for("cli") == {}
    assert "OMP_WAIT_POLICY" not in os.environ and "OMP_NUM_THREADS" not in os.environ
