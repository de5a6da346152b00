"""benchmarks/probes/scripted_decoding.py measures the four cells both ways on the shipped checkpoint and counts
identical hypotheses (not timed: speed is judged by running it on a quiet machine); it leaves EXPLORER_SCRIPTED as
it was."""

from __future__ import annotations

import os
import re

import pytest

from benchmarks.probes import scripted_decoding
from explorer.fastpath.scripted_decoding import VARIABLE

pytestmark = pytest.mark.usefixtures("torch_threads_restored")


def test_the_benchmark_prints_a_ratio_and_identical_hypotheses_for_each_cell(capsys, monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert scripted_decoding.main(1, 5) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split("|")[1].strip() for row in rows] == [
        "greedy, one sentence",
        "beam 4, one sentence",
        "greedy, batches of 32",
        "beam 4, batches of 32",
    ], out
    for row in rows:
        python, scripted, ratio, same = (cell.strip() for cell in row.split("|")[2:6])
        assert float(python) > 0 and float(scripted) > 0
        assert re.match(r"\d+\.\d{3}× \(", ratio)
        assert same == "5/5"
    assert VARIABLE not in os.environ
