"""Cells of CSV/TSV downloads made safe to open in a spreadsheet.

A spreadsheet evaluates a cell whose text starts with `=`, `+`, `-` or `@` as a formula (and a leading TAB or
CR can hide one), so an uploaded sentence such as `=HYPERLINK("http://…")` would become a live formula in the
user's spreadsheet. The OWASP rule for CSV injection: prefix such text cells with a single quote, which the
spreadsheet shows as text. Only text is touched: numbers (a score of -0.5) stay numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

V = TypeVar("V")


def safe_cell(value: V) -> V | str:
    """`value` unchanged, except text a spreadsheet would evaluate, which gets a leading `'`."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row (column -> value) with every text cell passed through `safe_cell`."""
    return {key: safe_cell(value) for key, value in row.items()}


def safe_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [safe_row(row) for row in rows]
