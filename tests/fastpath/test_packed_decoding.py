"""The packed decoder computes `Transformer.decode_step`, in every model variant it supports, and follows
weights changed in place (training) instead of keeping stale copies.

Equal up to float rounding, not bit for bit: the packed decoder keeps its weights (in, out) in memory, which
MKL multiplies in another summation order than F.linear's (out, in) (that layout is 2.7x faster for one row).
1e-5 is far below what a wrong weight, mask or position changes; the search's outputs are held identical
to the reference by tests/fastpath/test_search_identical.py."""

from __future__ import annotations

import pytest
import torch

from explorer.fastpath.linear_kernels import MKL, ONEDNN
from explorer.fastpath.packed_decoding import PackedDecoder, packed_decoder, supports_packed
from tests.engine.test_model import VARIANTS, make_model

SRC = torch.tensor([[5, 6, 7, 3, 0], [5, 6, 7, 8, 3]])
TGT = torch.tensor([[2, 9, 10, 11, 12, 13], [2, 14, 15, 16, 17, 18]])


@pytest.mark.parametrize("overrides", [v for v in VARIANTS if v.get("d_k") == v.get("d_v")])
@torch.inference_mode()
def test_packed_steps_equal_decode_step_with_reordering(overrides):
    model = make_model(**overrides).eval()
    assert supports_packed(model)
    encoded = model.encode(SRC)
    cache, packed_cache = model.start_decoding(encoded), packed_decoder(model).start(encoded)
    rows = torch.tensor([1, 0, 1])
    for t in range(TGT.shape[1]):
        tokens = TGT[:, t] if t == 0 else TGT[rows, t] if t == 1 else TGT[rows[:2], t]
        plain, cache = model.decode_step(tokens, cache)
        packed, packed_cache = packed_decoder(model).step(tokens, packed_cache)
        torch.testing.assert_close(packed, plain, rtol=1e-5, atol=1e-5, msg=f"step {t}, {overrides}")
        assert torch.equal(packed.argmax(-1), plain.argmax(-1))
        keep = rows if t == 0 else torch.tensor([0, 2]) if t == 1 else torch.tensor([0, 1])
        cache, packed_cache = cache.select(keep), packed_cache.select(keep)


def test_models_with_unequal_key_and_value_widths_keep_the_plain_path():
    assert not supports_packed(make_model(d_k=5, d_v=6))


def test_packed_decoder_is_rebuilt_after_weights_change_in_place():
    model = make_model().eval()
    before = packed_decoder(model)
    assert packed_decoder(model) is before
    with torch.no_grad():
        model.decoder_layers[0].self_attention.w_k.weight.add_(0.5)
    after = packed_decoder(model)
    assert after is not before
    with torch.inference_mode():
        encoded = model.encode(SRC)
        plain, _ = model.decode_step(TGT[:, 0], model.start_decoding(encoded))
        packed, _ = after.step(TGT[:, 0], after.start(encoded))
    torch.testing.assert_close(packed, plain, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("onednn", ["0", "1"])
@torch.inference_mode()
def test_both_kernel_choices_compute_the_same_step(onednn, monkeypatch):
    """`EXPLORER_ONEDNN=0` keeps MKL's addmm; the default takes oneDNN's prepacked linears where torch has them.
    Both compute `decode_step` (ReLU fused or not, the tied output projection without a bias)."""
    monkeypatch.setenv("EXPLORER_ONEDNN", onednn)
    model = make_model().eval()
    decoder = PackedDecoder(model)
    wanted = MKL if onednn == "0" or not torch.backends.mkldnn.is_available() else ONEDNN
    assert decoder.kernels is wanted
    encoded = model.encode(SRC)
    cache, packed_cache = model.start_decoding(encoded), decoder.start(encoded)
    for t in range(TGT.shape[1]):
        plain, cache = model.decode_step(TGT[:, t], cache)
        packed, packed_cache = decoder.step(TGT[:, t], packed_cache)
        torch.testing.assert_close(packed, plain, rtol=1e-5, atol=1e-5, msg=f"step {t}")


@pytest.mark.parametrize("shape", [(1, 10000), (4, 10000), (128, 10000), (7, 8001), (3, 5)])
def test_log_softmax_in_place_equals_it_out_of_place_to_the_bit(shape):
    """The packed step writes the log-probabilities over its logits (`PackedDecoder.step`): the CPU kernel must
    read each row whole before writing it, or the search would see other numbers."""
    logits = torch.randn(*shape, generator=torch.Generator().manual_seed(shape[0])) * 6
    expected = torch.log_softmax(logits, dim=-1)
    assert torch.equal(torch.log_softmax(logits, dim=-1, out=logits), expected)
