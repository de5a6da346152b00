"""`python -m benchmarks --out FILE` writes only between FILE's generated markers: the hand-written text around
them (benchmarks/RESULTS.md's summary) survives, and a file without markers is left untouched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.report import BEGIN, END, HandWrittenFile, write_report

REPO = Path(__file__).resolve().parents[2]


def test_a_new_file_holds_the_generated_block_alone(tmp_path):
    out = tmp_path / "new" / "RESULTS.md"
    write_report(out, "| a | b |\n")
    assert out.read_text(encoding="utf-8") == f"{BEGIN}\n| a | b |\n{END}\n"


def test_only_the_generated_block_is_replaced(tmp_path):
    out = tmp_path / "RESULTS.md"
    before, after = "# Results\n\nHand-written summary.\n\n", "\n## Summary\n\nMore hand-written text.\n"
    out.write_text(f"{before}{BEGIN}\nold table\n{END}\n{after}", encoding="utf-8")
    write_report(out, "new table\n")
    write_report(out, "newer table\n")  # twice: the markers stay where they were, nothing accumulates
    assert out.read_text(encoding="utf-8") == f"{before}{BEGIN}\nnewer table\n{END}\n{after}"


@pytest.mark.parametrize("text", ["# Hand-written\n", f"{BEGIN}\nno end marker\n", f"{END}\n{BEGIN}\n"])
def test_a_file_without_both_markers_is_not_written(tmp_path, text):
    out = tmp_path / "RESULTS.md"
    out.write_text(text, encoding="utf-8")
    with pytest.raises(HandWrittenFile):
        write_report(out, "table\n")
    assert out.read_text(encoding="utf-8") == text


def test_the_shipped_results_file_has_its_generated_block():
    """The README's command, `python -m benchmarks --out benchmarks/RESULTS.md`, must find the markers."""
    text = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and text.index(BEGIN) < text.index(END)
    assert "## Summary" in text[: text.index(BEGIN)], "the hand-written summary comes before the table"


def test_the_command_line_refuses_a_hand_written_file(tmp_path):
    out = tmp_path / "notes.md"
    out.write_text("# Notes kept by hand\n", encoding="utf-8")
    command = [sys.executable, "-m", "benchmarks", "--quick", "--only", "gpu", "--no-memory", "--out", str(out)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no generated block" in done.stderr
    assert out.read_text(encoding="utf-8") == "# Notes kept by hand\n"
