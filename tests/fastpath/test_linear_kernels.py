"""The packed paths' kernels are chosen by measuring both on the model's shapes (explorer/fastpath/linear_kernels.py):
which of MKL and oneDNN is faster depends on the CPU by more than either wins by (3x one way on an AMD EPYC,
1.7x the other on an Intel Xeon), so no fixed choice is right everywhere."""

from __future__ import annotations

import pytest
import torch

from explorer.fastpath import linear_kernels
from explorer.fastpath.linear_kernels import MKL, ONEDNN, Kernels, choose_kernels
from explorer.fastpath.packing import FEW_ROWS_TRANSPOSED, pack_feed_forward, weight_versions
from explorer.model.layers import PositionwiseFeedForward
from tests.engine.test_model import make_model

WEIGHTS = [torch.randn(12, 8), torch.randn(20, 12)]
needs_onednn = pytest.mark.skipif(not linear_kernels.onednn_usable(WEIGHTS[0]), reason="this torch build has no oneDNN")


def fake_timer(onednn_speedup: float, calls: list[tuple[str, int]]):
    def timer(kernels: Kernels, weights, rows: int) -> float:
        calls.append((kernels.name, rows))
        return 1.0 if kernels is MKL else 1.0 / onednn_speedup

    return timer


@pytest.fixture(autouse=True)
def fresh_choices(monkeypatch):
    monkeypatch.delenv(linear_kernels.VARIABLE, raising=False)
    monkeypatch.setattr(linear_kernels, "_CHOSEN", {})


@needs_onednn
@pytest.mark.parametrize(("speedup", "chosen"), [(2.0, ONEDNN), (1.05, MKL), (0.6, MKL)])
def test_the_faster_kernel_is_chosen_beyond_the_margin(speedup, chosen):
    calls: list[tuple[str, int]] = []
    assert choose_kernels(WEIGHTS, fake_timer(speedup, calls)) is chosen
    assert sorted(calls) == sorted((k.name, rows) for k in (MKL, ONEDNN) for rows in linear_kernels.ROWS)


@needs_onednn
def test_the_choice_is_measured_once_per_shapes_and_threads():
    calls: list[tuple[str, int]] = []
    first = choose_kernels(WEIGHTS, fake_timer(2.0, calls))
    measured = len(calls)
    assert choose_kernels([w.clone() for w in WEIGHTS], fake_timer(0.5, calls)) is first
    assert len(calls) == measured
    choose_kernels([torch.randn(5, 8)], fake_timer(0.5, calls))  # other shapes: measured again
    assert len(calls) > measured


@pytest.mark.parametrize(("value", "expected"), [("0", "MKL addmm"), ("1", "oneDNN")])
def test_the_variable_forces_a_kernel_without_measuring(value, expected, monkeypatch):
    monkeypatch.setenv(linear_kernels.VARIABLE, value)
    calls: list[tuple[str, int]] = []
    chosen = choose_kernels(WEIGHTS, fake_timer(2.0, calls))
    assert calls == []
    usable = linear_kernels.onednn_usable(WEIGHTS[0])
    assert chosen.name == (expected if usable else "MKL addmm")


def test_weights_oneDNN_cannot_multiply_keep_mkl():
    calls: list[tuple[str, int]] = []
    assert choose_kernels([w.double() for w in WEIGHTS], fake_timer(9.0, calls)) is MKL
    assert calls == []


@needs_onednn
def test_the_real_timer_measures_both_kernels():
    seconds = [linear_kernels.time_kernels(k, WEIGHTS, rows, repeats=1) for k in (MKL, ONEDNN) for rows in (1, 32)]
    assert all(0 < s < 1 for s in seconds)


@torch.inference_mode()
def test_mkl_multiplies_by_an_in_out_copy_like_f_linear():
    weight, bias, x = torch.randn(20, 12), torch.randn(20), torch.randn(3, 12)
    packed = MKL.pack(weight)
    assert packed.shape == (12, 20) and packed.is_contiguous()
    torch.testing.assert_close(MKL.apply(x, (packed, bias), False), torch.nn.functional.linear(x, weight, bias))
    torch.testing.assert_close(MKL.apply(x, (packed, bias), True), torch.nn.functional.linear(x, weight, bias).relu())


def test_weight_versions_see_in_place_changes_without_walking_the_modules_again(monkeypatch):
    model = make_model()
    before = weight_versions(model)

    def walked(*args, **kwargs):
        raise AssertionError("the parameters were listed again")

    monkeypatch.setattr(model, "parameters", walked)
    assert weight_versions(model) == before
    with torch.no_grad():
        model.decoder_layers[0].feed_forward.w_1.weight.mul_(2)
    assert weight_versions(model) != before


@pytest.mark.parametrize("rows", [1, 2, 4, 12, 13, 32])
@torch.inference_mode()
def test_the_mkl_feed_forward_reads_w2_in_the_layout_its_row_count_multiplies_faster(rows, monkeypatch):
    """Eq. 2 on MKL: W_2 (d_ff -> d_model) read transposed from the module's own (out, in) tensor for 2-12 rows,
    from the (in, out) copy otherwise; either way the block's own result, to float32 rounding."""
    block = PositionwiseFeedForward(16, 64).eval()
    feed_forward = pack_feed_forward(MKL, block)
    x = torch.randn(rows, 16)
    read: list[torch.Tensor] = []
    addmm = torch.addmm
    monkeypatch.setattr(torch, "addmm", lambda bias, a, b: read.append(b) or addmm(bias, a, b))
    torch.testing.assert_close(feed_forward(x), block(x))
    w_2 = read[1]
    assert w_2.shape == (64, 16)
    transposed = w_2.data_ptr() == block.w_2.weight.data_ptr() and not w_2.is_contiguous()
    assert transposed == (rows in FEW_ROWS_TRANSPOSED), f"{rows} rows"
