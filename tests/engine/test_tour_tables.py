"""The tour's small tables: rounded columns, the recorded step, the timed lengths."""

from __future__ import annotations

import numpy as np

from explorer.tour.tables import leading_columns, timed_lengths, trained_steps


def test_leading_columns_are_the_first_columns_rounded():
    values = np.array([[0.12345, 1.0, 2.0], [3.0, 4.55555, 5.0]])
    columns = leading_columns(values, 2, 2, "q")
    assert list(columns) == ["q[0]", "q[1]"]
    np.testing.assert_array_equal(columns["q[1]"], [1.0, 4.56])
    assert list(leading_columns(values, 6, 3)) == ["[0]", "[1]", "[2]"], "never more columns than there are"


def test_trained_steps_prefers_the_training_record():
    assert trained_steps({"training": {"step": 1200}, "step": 5}) == 1200
    assert trained_steps({"training": None, "step": 5}) == 5
    assert trained_steps({}) is None


def test_timed_lengths_include_d_and_twice_d_once():
    assert timed_lengths(64) == (16, 32, 64, 128)
    assert timed_lengths(256) == (16, 32, 64, 128, 256, 512)
