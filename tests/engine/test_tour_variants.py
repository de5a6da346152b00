"""Table 3 row (A) on this machine: the tour's base (8 heads) and one-head variant keep the parameter count.
Training them, each in its own process, is tests/processes/test_tour_variants.py."""

from __future__ import annotations

from explorer.config import count_parameters
from explorer.tour.variants import HEADS, variant_config


def test_row_a_keeps_the_parameter_count():
    base, one = (variant_config(h, 32) for h in HEADS)
    assert (base.n_heads, base.head_dim_k) == (8, 8) and (one.n_heads, one.head_dim_k) == (1, 64)
    assert count_parameters(base) == count_parameters(one)
