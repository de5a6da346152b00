"""Head masks (Michel et al., 2019): an argument, not module state. An empty mask changes nothing bit for bit;
a masked head loses exactly its own contribution to W^O; cached decoding still equals recompute."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from explorer.config import ModelConfig
from explorer.model import HeadMask, HeadMeans, HeadNameError, Transformer
from explorer.model.attention import MultiHeadAttention
from explorer.model.head_mask import HeadSelection, all_head_names, valid_range


def make_model(**overrides) -> Transformer:
    torch.manual_seed(0)
    config = ModelConfig(
        vocab_size=50,
        d_model=32,
        n_heads=4,
        d_ff=64,
        n_encoder_layers=2,
        n_decoder_layers=3,
        dropout=0.0,
        max_len=40,
        **overrides,
    )
    return Transformer(config).eval()


SRC = torch.tensor([[5, 6, 7, 3, 0], [5, 6, 7, 8, 3]])
TGT = torch.tensor([[2, 9, 10, 11, 0, 0], [2, 14, 15, 16, 17, 18]])


def all_kept(config: ModelConfig) -> HeadMask:
    return HeadMask(
        torch.ones(config.n_encoder_layers, config.n_heads),
        torch.ones(config.n_decoder_layers, config.n_heads),
        torch.ones(config.n_decoder_layers, config.n_heads),
    )


@pytest.mark.parametrize("need_weights", [False, True])
def test_empty_mask_is_bitwise_identical(need_weights):
    model = make_model()
    plain = model(SRC, TGT, need_weights=need_weights)
    for mask in (HeadMask(), all_kept(model.config), HeadMask.parse("none", model.config)):
        masked = model(SRC, TGT, need_weights=need_weights, head_mask=mask)
        assert torch.equal(plain.logits, masked.logits)
        if need_weights:
            for family in ("encoder_self", "decoder_self", "cross"):
                assert torch.equal(getattr(plain.attention, family), getattr(masked.attention, family))
    cache_plain = model.start_decoding(model.encode(SRC))
    cache_masked = model.start_decoding(model.encode(SRC, head_mask=HeadMask()))
    for t in range(3):
        a, cache_plain = model.decode_step(TGT[:, t], cache_plain)
        b, cache_masked = model.decode_step(TGT[:, t], cache_masked, head_mask=HeadMask())
        assert torch.equal(a, b)


def test_masking_a_head_zeroes_exactly_its_block_before_w_o():
    """Hand-built module: W^O = identity and no bias, so the output *is* the concatenation of the heads."""
    torch.manual_seed(3)
    attention = MultiHeadAttention(12, 3).eval()
    with torch.no_grad():
        attention.w_o.weight.copy_(torch.eye(12))
        attention.w_o.bias.zero_()
    x = torch.randn(2, 5, 12)
    plain = attention(x, x).output
    masked = attention(x, x, heads=HeadSelection(torch.tensor([1.0, 0.0, 1.0]))).output
    assert torch.equal(masked[..., 4:8], torch.zeros(2, 5, 4)), "head 1 (columns 4-7) contributes nothing"
    assert torch.equal(masked[..., :4], plain[..., :4]) and torch.equal(masked[..., 8:], plain[..., 8:])
    # Mean-ablation puts the head's reference output in its place instead of zero.
    fill = torch.arange(12.0).view(3, 4)
    mean_ablated = attention(x, x, heads=HeadSelection(torch.tensor([1.0, 0.0, 1.0]), fill)).output
    assert torch.allclose(mean_ablated[..., 4:8], fill[1].expand(2, 5, 4))
    assert torch.equal(mean_ablated[..., :4], plain[..., :4])


@pytest.mark.parametrize(
    "family,field,layer,head", [("enc", "encoder_self", 1, 2), ("dec", "decoder_self", 2, 0), ("cross", "cross", 1, 3)]
)
def test_masked_head_removes_its_own_contribution_in_the_model(family, field, layer, head):
    """In the full model, the masked module's output drops by head_h · W^O[:, block h] and nothing else."""
    model = make_model()
    mask = HeadMask.from_names([f"{family}.{layer}.{head}"], model.config)
    plain = model(SRC, TGT, need_weights=True, inspect=(field, layer)).internals
    masked = model(SRC, TGT, need_weights=True, inspect=(field, layer), head_mask=mask).internals
    assert torch.allclose(plain.head_outputs, masked.head_outputs), "heads before the gate are unchanged"
    module = (
        model.encoder_layers[layer].self_attention
        if family == "enc"
        else (
            model.decoder_layers[layer].self_attention
            if family == "dec"
            else model.decoder_layers[layer].cross_attention
        )
    )
    d_v = module.d_v
    block = module.w_o.weight[:, head * d_v : (head + 1) * d_v]  # (d_model, d_v)
    contribution = plain.head_outputs[:, head] @ block.T  # (batch, query, d_model)
    assert torch.allclose(masked.output, plain.output - contribution, atol=1e-5)
    assert contribution.abs().max() > 1e-3, "the head did contribute something"


def test_fused_path_keeps_the_mask_and_agrees_with_explicit(monkeypatch):
    model = make_model()
    mask = HeadMask.from_names(["enc.0.1", "dec.1.2", "cross.2.0", "cross.0.3"], model.config)
    explicit = model(SRC, TGT, need_weights=True, head_mask=mask).logits
    calls = []
    fused_kernel = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or fused_kernel(*a, **k))
    fused = model(SRC, TGT, head_mask=mask).logits
    assert len(calls) == 2 + 3 * 2, "every module still runs the fused kernel with a mask"
    assert torch.allclose(fused, explicit, atol=1e-5)
    assert not torch.allclose(fused, model(SRC, TGT).logits, atol=1e-3), "the mask changed the output"


@pytest.mark.parametrize("names", [["enc.1.0"], ["dec.0.1", "dec.2.3"], ["cross.1.2", "enc.0.0", "dec.2.1"]])
def test_cached_decoding_with_mask_equals_full_recompute(names):
    model = make_model()
    mask = HeadMask.from_names(names, model.config)
    full = torch.log_softmax(model(SRC, TGT, head_mask=mask).logits, -1)
    cache = model.start_decoding(model.encode(SRC, head_mask=mask))
    for t in range(TGT.shape[1]):
        step, cache = model.decode_step(TGT[:, t], cache, head_mask=mask)
        real = TGT[:, t] != 0
        assert torch.allclose(step[real], full[real, t], atol=1e-5), f"step {t}"


def test_mean_ablation_differs_from_zero_ablation_and_checks_shapes():
    model = make_model()
    config = model.config
    means = HeadMeans(torch.randn(2, 4, 8), torch.randn(3, 4, 8), torch.randn(3, 4, 8))
    zero = HeadMask.from_names(["cross.1.1"], config)
    mean = HeadMask.from_names(["cross.1.1"], config, means=means)
    assert not torch.allclose(model(SRC, TGT, head_mask=zero).logits, model(SRC, TGT, head_mask=mean).logits)
    # Means only act on switched-off heads: with nothing off they change nothing.
    assert torch.equal(model(SRC, TGT).logits, model(SRC, TGT, head_mask=HeadMask(means=means)).logits)


def test_head_names_round_trip_and_bad_names_list_the_valid_range():
    config = make_model().config
    mask = HeadMask.parse(" cross.2.0, enc.0.3 ", config)
    assert mask.off() == ["enc.0.3", "cross.2.0"]
    assert not mask.is_empty and HeadMask().is_empty and HeadMask.parse("", config).is_empty
    assert len(all_head_names(config)) == (2 + 3 + 3) * 4
    assert valid_range(config) == "enc.0-1.0-3, dec.0-2.0-3, cross.0-2.0-3"
    for bad in ("cross.3.0", "enc.2.0", "dec.0.4", "self.0.0", "cross.1", "cross.a.0", "cross.-1.0"):
        with pytest.raises(HeadNameError, match=r"valid: enc\.0-1\.0-3, dec\.0-2\.0-3, cross\.0-2\.0-3"):
            HeadMask.parse(bad, config)
    wrong_shape = HeadMask(cross=torch.ones(6, 8))
    with pytest.raises(HeadNameError, match="needs"):
        make_model()(SRC, TGT, head_mask=wrong_shape)


@pytest.mark.slow
def test_head_mask_benchmark_runs_quick():
    from benchmarks import head_mask as bench
    from benchmarks.common import Options

    result = bench.run(Options(quick=True, threads=1, memory=False))
    measures = [row.measure for row in result.rows]
    assert "greedy: one sentence with 2 heads off ÷ unmasked" in measures
    assert "beam 4: one sentence with 2 heads off ÷ unmasked" in measures
    assert all(row.value.endswith("×") for row in result.rows)
