"""Table 3's rows on this machine: row (A)'s base (8 heads) and one-head variant keep the parameter count, row
(B) changes d_k alone, (D) training alone and (E) the positions alone. Training them, each in its own process,
is tests/processes/test_tour_variants.py."""

from __future__ import annotations

import dataclasses

from explorer.config import count_parameters
from explorer.tour.variants import ROWS, row_config, row_train_config


def test_row_a_keeps_the_parameter_count():
    row = ROWS["A"]
    base, one = (row_config(row, v, 32) for v in row.variants)
    assert (base.n_heads, base.head_dim_k) == (8, 8) and (one.n_heads, one.head_dim_k) == (1, 64)
    assert count_parameters(base) == count_parameters(one)


def test_rows_b_d_e_change_one_thing():
    b, d, e = (ROWS[letter] for letter in "BDE")
    small, large = (row_config(b, v, 32) for v in b.variants[::-1])
    assert (large.head_dim_k, small.head_dim_k) == (16, 4) and small.head_dim_v == large.head_dim_v == 16
    assert count_parameters(small) < count_parameters(large)
    smoothed, plain = (row_train_config(d, v, 10) for v in d.variants)
    assert (smoothed.label_smoothing, plain.label_smoothing) == (0.1, 0.0)
    assert dataclasses.replace(smoothed, label_smoothing=0.0) == plain
    sinusoidal, learned = (row_config(e, v, 32) for v in e.variants)
    assert (sinusoidal.positional, learned.positional) == ("sinusoidal", "learned")
    assert dataclasses.replace(learned, positional="sinusoidal") == sinusoidal
