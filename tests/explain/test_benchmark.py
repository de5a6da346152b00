"""benchmarks/explain.py at its quick size: it runs, reports the attribution time with its ratio to one pass, and
the AER timing when Multi30k is at hand (speed itself is judged by `python -m benchmarks --only explain`)."""

from __future__ import annotations

import re

import pytest

from benchmarks import BENCHMARKS, load
from benchmarks.common import Options
from explorer.data.multi30k import multi30k_available


@pytest.mark.usefixtures("one_torch_thread")
def test_explain_benchmark_runs_at_tiny_size(capsys):
    assert BENCHMARKS["explain"] == "benchmarks.explain"
    result = load("explain").run(Options(quick=True, threads=1, memory=False))
    printed = capsys.readouterr().out
    rows = {row.measure: row.value for row in result.rows}
    assert re.fullmatch(r"\d+ ms", rows["attribution of one output token, 4 integrated-gradient steps"])
    (ratio,) = [v for m, v in rows.items() if m.startswith("… ÷ one teacher-forced pass")]
    assert re.fullmatch(r"\d+\.\d\d×", ratio) and re.search(r"\d+\.\d\d×", printed)
    if multi30k_available():
        (aer,) = [v for m, v in rows.items() if m.startswith("AER of all")]
        assert re.fullmatch(r"\d+\.\d\d s", aer) and "over 20 test2016 pairs" in " ".join(rows)
