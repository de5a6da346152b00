"""benchmarks/probes/linear_kernels.py runs on the shipped decoder's weights and prints one row per row count, with a
ratio (not timed: the speed is judged by running it on a quiet machine)."""

from __future__ import annotations

import re

import pytest
import torch

from benchmarks.probes import linear_kernels


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="this torch build has no oneDNN")
def test_the_kernel_benchmark_prints_a_ratio_per_row_count(capsys, monkeypatch):
    monkeypatch.setattr(linear_kernels, "ROWS", (1, 4))
    assert linear_kernels.main(1) == 0
    out = capsys.readouterr().out
    assert re.search(r"^chosen by the packed paths here: (MKL addmm|oneDNN)$", out, re.M)
    table = [line for line in out.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [int(line.split("|")[1]) for line in table] == [1, 4]
    for line in table:
        mkl, onednn, ratio = (cell.strip() for cell in line.split("|")[2:5])
        assert float(mkl) > 0 and float(onednn) > 0 and ratio.endswith("×") and float(ratio[:-1]) > 0


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="this torch build has no oneDNN")
@torch.inference_mode()
def test_both_kernels_multiply_the_shipped_weights_alike():
    weights = linear_kernels._weights()
    x = torch.randn(4, 256)
    for weight, bias in weights[:6] + weights[-1:]:
        if weight.shape[1] != x.shape[1]:
            continue
        mkl = linear_kernels.MKL.apply(x, (linear_kernels.MKL.pack(weight), bias), False)
        onednn = linear_kernels.ONEDNN.apply(x, (linear_kernels.ONEDNN.pack(weight), bias), False)
        torch.testing.assert_close(onednn, mkl, rtol=1e-4, atol=1e-4)
