"""A small matrix as an HTML table with its numbers in coloured cells: q, K and V of Eq. 1's first step.

Why a table and not a plotly heat map: these matrices are read for their numbers (8 columns, a row per token),
and the browser draws a table of text at once, where every plotly chart costs a layout pass of its own. With
q, K and V as plotly heat maps, Step by step's first tab held its figures back by about 0.6 s on a 2-core
machine (benchmarks/JOURNAL.md). The cells carry the heat maps' colours (`theme.DIVERGING_COLORSCALE`, symmetric
around 0) and their hover text; the labels and title take the page's text colour, so both themes read.

Pure function: arrays and labels in, an HTML string out (shown by `st.html`). Every label is escaped: token
labels come from the user's sentence.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence

import numpy as np
from plotly.colors import sample_colorscale

from explorer.figures import theme
from explorer.i18n import translate

# Text on a cell: black on the light end of the scale, white on the dark end (relative luminance, WCAG): on the
# scale's middle greys only pure black keeps 4.5:1.
_DARK_TEXT, _LIGHT_TEXT = "#000000", "#ffffff"
_LEGEND_STOPS = 9


def _luminance(rgb: tuple[float, float, float]) -> float:
    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _rgb(colour: str) -> tuple[float, float, float]:
    """'rgb(0, 34, 78)' -> (0.0, 34.0, 78.0), as plotly's `sample_colorscale` writes them."""
    r, g, b = (float(part) for part in colour[colour.index("(") + 1 : colour.index(")")].split(","))
    return r, g, b


@functools.cache
def _legend_colours() -> str:
    """The legend's gradient stops, the scale's colours from end to end (the same for every table)."""
    return ", ".join(sample_colorscale(theme.DIVERGING_COLORSCALE, list(np.linspace(0, 1, _LEGEND_STOPS))))


def _number(value: float, decimals: int) -> str:
    """`value` to `decimals` places with a true minus sign (U+2212), as plotly writes the heat maps' numbers."""
    return f"{value:.{decimals}f}".replace("-", "\u2212")


def cell_colours(values: np.ndarray, limit: float) -> tuple[list[str], list[str]]:
    """Background and text colour of each value (flattened, row by row) on the diverging scale over
    [-limit, limit]; a value outside is drawn at the scale's end, a non-finite one at its middle."""
    flat = np.asarray(values, dtype=float).ravel()
    fractions = np.where(np.isfinite(flat), (np.clip(flat, -limit, limit) / limit + 1) / 2, 0.5)
    backgrounds = sample_colorscale(theme.DIVERGING_COLORSCALE, [float(f) for f in fractions])
    # The text colour with the larger contrast against the cell (contrast = (L1 + 0.05) / (L2 + 0.05)).
    texts = [_DARK_TEXT if _luminance(_rgb(colour)) > 0.179 else _LIGHT_TEXT for colour in backgrounds]
    return backgrounds, texts


def matrix_table(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None = None,
    *,
    title: str = "",
    decimals: int = 2,
    bound: float | None = None,
    x_title: str | None = None,
    scale: float = 1.0,
    lang: str = "en",
) -> str:
    """values (rows, cols) as an HTML table: a header of column labels (default: dimension indices 0..cols-1),
    a row label per row, each number in a cell coloured on the diverging scale symmetric around 0 (over
    [-bound, bound], default the largest absolute value), and a colour legend under it.

    `title` is trusted markup (the page's own, with <sup> and <br>), shown above the table; labels are escaped.
    Each cell's hover text is "row, x_title column: value" to 4 decimals, as the heat maps' hover. `scale`
    enlarges the text (presenter mode).
    """
    m = np.atleast_2d(np.asarray(values, dtype=float))
    rows, cols = m.shape
    assert len(row_labels) == rows, f"expected {rows} row labels, got {len(row_labels)}"
    columns = [str(c) for c in range(cols)] if col_labels is None else [str(c) for c in col_labels]
    assert len(columns) == cols, f"expected {cols} column labels, got {len(columns)}"
    x_title = translate("dimension", lang) if x_title is None else x_title
    limit = theme.diverging_limit(m, bound)
    backgrounds, texts = cell_colours(m, limit)
    size = round(theme.CELL_TEXT_SIZE * scale)
    label_size = round(theme.TICK_SIZE * scale)
    body: list[str] = []
    for i, label in enumerate(row_labels):
        name = html.escape(str(label))
        cells = []
        for j in range(cols):
            k = i * cols + j
            value = m[i, j]
            shown = _number(value, decimals) if np.isfinite(value) else ""
            hover = f"{name}, {html.escape(x_title)} {html.escape(columns[j])}: {_number(value, 4)}"
            cells.append(f'<td title="{hover}" style="background:{backgrounds[k]};color:{texts[k]}">{shown}</td>')
        body.append(f'<tr><th scope="row">{name}</th>{"".join(cells)}</tr>')
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in columns)
    caption = f'<figcaption style="font-size:{round(theme.FONT_SIZE * scale)}px">{title}</figcaption>' if title else ""
    return (
        f'<figure class="ae-matrix" style="margin:0 0 0.5rem 0;font-size:{label_size}px">{caption}'
        '<div style="overflow-x:auto">'
        f'<table style="border-collapse:separate;border-spacing:2px;font-variant-numeric:tabular-nums">'
        f'<thead><tr><th scope="col" style="font-weight:normal;text-align:right;padding:0 6px">'
        f"{html.escape(x_title)}</th>{head}</tr></thead>"
        f'<tbody style="font-size:{size}px">{"".join(body)}</tbody></table></div>'
        f'<div style="display:flex;align-items:center;gap:6px;margin-top:4px">'
        f"<span>{_number(-limit, decimals)}</span>"
        f'<span style="display:inline-block;width:160px;height:10px;background:linear-gradient(to right, '
        f'{_legend_colours()})"></span><span>{_number(limit, decimals)}</span></div></figure>'
    )


MATRIX_STYLE = """
<style>
.ae-matrix figcaption { font-weight: 600; margin-bottom: 4px; line-height: 1.3; }
.ae-matrix figcaption span { font-weight: normal; opacity: 0.85; }
.ae-matrix th, .ae-matrix td { padding: 4px 8px; border: none; }
.ae-matrix td { text-align: right; min-width: 3.6em; border-radius: 2px; }
.ae-matrix tbody th { text-align: right; font-weight: normal; white-space: nowrap; }
.ae-matrix thead th { text-align: center; font-weight: normal; opacity: 0.8; }
</style>
"""
"""The tables' shared look: given once per page, not once per table."""
