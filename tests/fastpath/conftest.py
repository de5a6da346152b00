"""Fixtures of the scripted-search tests (test_scripted_decoding.py, test_scripted_beam.py): `kernels` runs a test
module on both linear kernels where it asks for it (`pytestmark = pytest.mark.usefixtures("kernels")`), `steps`
counts the Python steps."""

from __future__ import annotations

import pytest
import torch

import explorer.fastpath.scripted_decoding as scripted_decoding
from explorer.fastpath.linear_kernels import onednn_usable
from explorer.fastpath.packed_decoding import PackedDecoder


@pytest.fixture(params=["0", "1"], ids=["MKL", "oneDNN"])
def kernels(request, monkeypatch):
    """The scripted steps multiply as the kernels the packed decoder chose do, MKL's or oneDNN's; which a model
    gets is measured per machine (MKL on the Intel Xeon, oneDNN on the AMD EPYC), so every test runs with each
    (each builds a fresh model, whose packed decoder reads this when it is first made)."""
    if request.param == "1" and not onednn_usable(torch.ones(1)):
        pytest.skip("this torch build has no oneDNN linears")
    monkeypatch.setenv("EXPLORER_ONEDNN", request.param)
    monkeypatch.delenv(scripted_decoding.VARIABLE, raising=False)


@pytest.fixture
def steps(monkeypatch):
    """How many Python steps the packed decoders made."""
    calls: list[int] = []
    real = PackedDecoder.step

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PackedDecoder, "step", counted)
    return calls
