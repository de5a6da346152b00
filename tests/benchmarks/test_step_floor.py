"""benchmarks/probes/step_floor.py splits a greedy step of the shipped model into its weight products, the output's
log-softmax and maximum, and the rest (not timed: the figures are read on a quiet machine, RESULTS.md)."""

from __future__ import annotations

import re

import pytest
import torch

from benchmarks.probes import step_floor
from explorer.fastpath import linear_kernels

pytestmark = pytest.mark.usefixtures("torch_threads_restored")


def test_the_benchmark_prints_every_part_of_a_step_in_microseconds(capsys, monkeypatch):
    # The probe splits the scripted MKL step; which kernels a fresh model takes is measured at load time, and on a
    # busy machine oneDNN can win that measurement, where the probe has nothing to split.
    monkeypatch.setenv(linear_kernels.VARIABLE, "0")
    assert step_floor.main(1, 3) == 0
    out = capsys.readouterr().out
    first, second = out.split("\nThe products one by one")
    rows = [line for line in first.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split("|")[1].strip().split(" (")[0] for row in rows] == [
        "a step as shipped",
        "its weight products alone",
        "the output's log-softmax and maximum alone",
        "the rest",
    ], out
    values = [float(row.split("|")[2]) for row in rows]
    assert values[0] > 0 and values[1] > 0 and values[2] > 0
    assert values[3] == pytest.approx(values[0] - values[1] - values[2], abs=0.2)  # the rest is what is left
    # the shipped decoder reads about 19 MiB a step: three layers and a 10,000-piece output projection
    mib = float(re.search(r"alone \(([\d.]+) MiB", out).group(1))
    assert 15 < mib < 25, out
    # then each product alone: six kinds a layer, three layers, and the output projection by each kernel torch has
    products = [line for line in second.splitlines() if line.startswith("| ") and "---" not in line][1:]
    names = [row.split("|")[1].strip() for row in products]
    assert names[:6] == [f"{name} (3 layers)" for name in step_floor.PRODUCT_NAMES], out
    assert names[6] == "output projection, MKL"
    for row in products[:6]:
        assert len(row.split("|")[3].split(",")) == 3 and all(float(v) > 0 for v in row.split("|")[3].split(","))


def test_the_products_it_times_are_the_ones_a_step_makes(monkeypatch):
    """Each (bias, weight) pair multiplies a row of the width the step gives it, and the step's own function
    over the same weights makes products of those shapes: 6 a layer and the output projection."""
    # The probe splits MKL's step (it sets this itself); on a CPU where oneDNN wins the load-time measurement the
    # weights would be oneDNN's packed copies, whose shapes are not (in, out).
    monkeypatch.setenv(linear_kernels.VARIABLE, "0")
    loaded = step_floor.load_checkpoint(step_floor.SHIPPED_CHECKPOINT, "cpu")
    scorer = step_floor.scorer_for(loaded.model, torch.tensor([[5, 6, 7, loaded.config.eos_id]]))
    decoder = scorer.decoder
    weights = decoder.scripted_weights
    assert weights is not None and not weights.onednn
    folded = step_floor.scripted_decoding._one_group_folded(scorer.cache)
    pairs = step_floor._products(weights.flat, folded, weights.few_rows)
    assert len(pairs) == 6 * len(decoder.layers)
    width = loaded.config.d_model
    for bias, weight in pairs:
        assert bias.shape[-1] == weight.shape[1]
        assert weight.shape[0] in (width, loaded.config.d_ff, 4 * loaded.config.n_heads)  # folded: heads·src
    assert decoder.output[0].shape == (width, loaded.config.vocab_size)
