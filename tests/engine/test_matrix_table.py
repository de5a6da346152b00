"""The matrix tables of Step by step's first tab (q, K, V): the numbers as given, the heat maps' colours on a scale
symmetric around zero, readable text on every colour, labels from the user's sentence escaped."""

from __future__ import annotations

import numpy as np
import pytest
from plotly.colors import sample_colorscale

from explorer.figures import theme
from explorer.figures.matrix_table import cell_colours, matrix_table
from tests.engine.test_figure_legibility import WCAG_AA, contrast
from tests.matrix_table_reader import hovers, read_matrix_table


def test_the_numbers_and_labels_read_back_as_given():
    values = np.array([[0.5, -2.0, 1.234], [1.0, 0.25, -0.004]])
    body = matrix_table(values, ["<s>", "Hund"], title="K = X W<sup>K</sup>", decimals=2)
    caption, columns, rows, shown = read_matrix_table(body)
    assert caption == "K = X WK"
    assert columns == ["0", "1", "2"]
    assert rows == ["<s>", "Hund"]  # escaped in the markup, read back as the token
    np.testing.assert_allclose(shown, values, atol=0.005 + 1e-12)
    assert hovers(body)[1][2] == "Hund, dimension 2: \u22120.0040"
    assert ">\u22122.00<" in body and ">-2.00<" not in body  # a true minus, as plotly writes the heat maps'


def test_labels_from_a_sentence_cannot_inject_markup():
    body = matrix_table(np.zeros((1, 2)), ['<img src=x onerror="alert(1)">'], col_labels=["<b>", "x"])
    assert "<img" not in body and "<b>" not in body
    assert read_matrix_table(body)[2] == ['<img src=x onerror="alert(1)">']


def test_colours_are_the_heat_maps_scale_symmetric_around_zero():
    backgrounds, _ = cell_colours(np.array([-3.0, 0.0, 3.0, 1.5, 9.0, np.nan]), 3.0)
    ends = sample_colorscale(theme.DIVERGING_COLORSCALE, [0.0, 0.5, 1.0, 0.75, 1.0, 0.5])
    assert backgrounds == ends
    # A table's scale is its own largest |value| unless a bound is given.
    body = matrix_table(np.array([[-1.0, 2.0]]), ["q"])
    cell = "background:{}".format
    assert cell(sample_colorscale(theme.DIVERGING_COLORSCALE, [0.0])[0]) not in body  # -1 is not the end; -2 would be
    assert cell(sample_colorscale(theme.DIVERGING_COLORSCALE, [0.25])[0]) in body


def test_every_cell_text_is_readable_on_its_colour():
    values = np.linspace(-1, 1, 201)
    backgrounds, texts = cell_colours(values, 1.0)
    worst = min(contrast(fg, bg) for bg, fg in zip(backgrounds, texts, strict=True))
    assert worst >= WCAG_AA, worst


def test_label_counts_must_match():
    with pytest.raises(AssertionError, match="expected 2 row labels"):
        matrix_table(np.zeros((2, 2)), ["only one"])


def test_presenter_scale_enlarges_the_text():
    small = matrix_table(np.zeros((1, 2)), ["q"], title="q")
    large = matrix_table(np.zeros((1, 2)), ["q"], title="q", scale=1.5)
    assert f"font-size:{theme.CELL_TEXT_SIZE}px" in small
    assert f"font-size:{round(theme.CELL_TEXT_SIZE * 1.5)}px" in large
