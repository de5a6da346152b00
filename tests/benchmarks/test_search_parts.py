"""benchmarks/probes/search_parts.py runs both comparisons on the shipped checkpoint and prints a ratio per row and the
identical-output counts (not timed: speed is judged by running it on a quiet machine)."""

from __future__ import annotations

import re

import pytest

from benchmarks.probes import search_parts

pytestmark = pytest.mark.usefixtures("torch_threads_restored")


def test_the_search_parts_benchmark_prints_ratios_and_identical_outputs(capsys):
    assert search_parts.main(1, 6) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 7, out
    for row in rows:
        old, new, ratio = (cell.strip() for cell in row.split("|")[2:5])
        assert float(old) > 0 and float(new) > 0 and re.fullmatch(r"\d+\.\d\d×", ratio)
    counts = re.findall(r"^identical outputs, [^:]+: (\d+)/(\d+)$", out, re.M)
    assert len(counts) == 4 and all(same == total for same, total in counts), out


def test_both_ways_are_restored_after_the_benchmark():
    """The benchmark swaps the top-k and the folding choice in place; the library must get its own back."""
    from explorer.decoding import candidates as search
    from explorer.decoding.top_k import row_top_k
    from explorer.fastpath import packed_decoding
    from explorer.fastpath.folded_cross import worth_folding

    search_parts.main(1, 2)
    assert search.row_top_k is row_top_k
    assert packed_decoding.worth_folding is worth_folding
    assert search._FEW_ROWS == 8
