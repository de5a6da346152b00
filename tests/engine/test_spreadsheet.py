"""Downloads a spreadsheet opens: text that would run as a formula is written as text, numbers stay numbers."""

from __future__ import annotations

import csv
import io

import pytest

from explorer.analysis.importance import HeadScore, ImportanceSettings, ImportanceTable
from explorer.complexity.measure import rows_to_csv
from explorer.text.spreadsheet import safe_cell, safe_rows
from ui.translate.batch import download_text

HOSTILE = ['=HYPERLINK("http://evil.example","x")', "+1+2", "-2+3", "@SUM(A1)", "\t=1"]


@pytest.mark.parametrize("text", [*HOSTILE, "\r=1"])
def test_formula_text_gets_a_quote(text):
    assert safe_cell(text) == "'" + text


def test_plain_text_and_numbers_stay_as_they_are():
    assert safe_cell("a = b") == "a = b"
    assert safe_cell(-0.5) == -0.5 and safe_cell(-3) == -3 and safe_cell(False) is False and safe_cell(None) is None
    assert safe_rows([{"a": "-x", "b": -1.0}]) == [{"a": "'-x", "b": -1.0}]


@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_batch_download_neutralises_sentences(delimiter):
    rows = [
        {"#": i + 1, "source": text, "translation": text, "score": -0.5, "truncated": False, "model": "float"}
        for i, text in enumerate(HOSTILE)
    ]
    back = list(csv.DictReader(io.StringIO(download_text(rows, delimiter)), delimiter=delimiter))
    assert [row["source"] for row in back] == ["'" + text for text in HOSTILE]
    assert [row["translation"] for row in back] == ["'" + text for text in HOSTILE]
    assert {row["score"] for row in back} == {"-0.5"}, "a negative score stays a number"


def test_complexity_csv_keeps_negative_numbers():
    back = list(csv.DictReader(io.StringIO(rows_to_csv([{"layer": "=cmd()", "n": 4, "delta": -1.5}]))))
    assert back == [{"layer": "'=cmd()", "n": "4", "delta": "-1.5"}]


def test_importance_csv_quotes_names_not_numbers():
    head = HeadScore(name="-enc.0.1", bleu=1.0, bleu_drop=-0.25, gradient=-1e-3, gradient_normalised=-0.5)
    table = ImportanceTable("hash", ImportanceSettings(), 1.25, "signature", [head])
    rows = list(csv.reader(io.StringIO(table.to_csv())))
    assert rows[1] == ["'-enc.0.1", "1.00", "-0.25", "-0.001", "-0.5000"]
