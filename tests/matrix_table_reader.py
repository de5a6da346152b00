"""Reads a matrix table (explorer/figures/matrix_table.py) back into labels and numbers, as a reader sees them:
the tests hold what a page shows against the engine's arrays."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.caption: list[str] = []
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self.hovers: list[list[str]] = []
        self._where: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._where.append(tag)
        if tag == "tr" and "tbody" in self._where:
            self.rows.append([])
            self.hovers.append([])
        if tag in ("th", "td"):
            self._cell = []
            if tag == "td":
                self.hovers[-1].append(dict(attrs).get("title") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            (self.rows[-1] if "tbody" in self._where else self.header).append(text)
            self._cell = None
        if self._where and self._where[-1] == tag:
            self._where.pop()

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif "figcaption" in self._where:
            self.caption.append(data)


def read_matrix_table(body: str) -> tuple[str, list[str], list[str], np.ndarray]:
    """(caption text, column labels, row labels, values as shown, their minus signs (U+2212) read as "-"; NaN for an
    empty cell)."""
    reader = _Reader()
    reader.feed(body)
    values = np.array(
        [[float(cell.replace("\u2212", "-")) if cell else np.nan for cell in row[1:]] for row in reader.rows],
        dtype=float,
    ).reshape(len(reader.rows), -1)
    return "".join(reader.caption), reader.header[1:], [row[0] for row in reader.rows], values


def hovers(body: str) -> list[list[str]]:
    """Each cell's hover text, row by row."""
    reader = _Reader()
    reader.feed(body)
    return reader.hovers
