"""The model's contract: causality, padding invariance, proper attention distributions, fused == explicit,
cached incremental decoding == full recompute, internals consistent with the weights."""

from __future__ import annotations

import math

import pytest
import torch

from explorer.config import ModelConfig, count_parameters, preset
from explorer.model import Transformer, causal_mask
from explorer.model.attention import MultiHeadAttention

PAD = 0


def make_model(**overrides) -> Transformer:
    torch.manual_seed(0)
    config = ModelConfig(
        vocab_size=50,
        d_model=32,
        n_heads=4,
        d_ff=64,
        n_encoder_layers=2,
        n_decoder_layers=2,
        dropout=0.0,
        max_len=40,
        **overrides,
    )
    return Transformer(config).eval()


VARIANTS = [{}, {"positional": "learned"}, {"norm_position": "pre"}, {"share_embeddings": False}, {"d_k": 5, "d_v": 6}]


@pytest.mark.parametrize("overrides", VARIANTS)
def test_no_position_sees_the_future(overrides):
    model = make_model(**overrides)
    src = torch.randint(4, 50, (2, 7))
    tgt = torch.randint(4, 50, (2, 9))
    changed = tgt.clone()
    t = 5
    changed[:, t:] = torch.randint(4, 50, (2, 9 - t))
    a = model(src, tgt, need_weights=True)
    b = model(src, changed, need_weights=True)
    assert torch.allclose(a.logits[:, :t], b.logits[:, :t], atol=1e-5)
    assert not torch.allclose(a.logits[:, t:], b.logits[:, t:], atol=1e-3), "later positions must react"
    # Masked decoder self-attention puts exactly zero weight on later positions.
    upper = torch.triu(torch.ones(9, 9, dtype=torch.bool), diagonal=1)
    assert a.attention.decoder_self[..., upper].abs().max() == 0


@pytest.mark.parametrize("overrides", VARIANTS[:3])
def test_padding_changes_nothing(overrides):
    model = make_model(**overrides)
    src = torch.tensor([[5, 6, 7, 8, 3]])
    tgt = torch.tensor([[2, 9, 10, 11]])
    alone = model(src, tgt, need_weights=True)
    other_src = torch.randint(4, 50, (1, 9))
    other_tgt = torch.randint(4, 50, (1, 7))
    batch_src = torch.full((2, 9), PAD)
    batch_tgt = torch.full((2, 7), PAD)
    batch_src[0, :5], batch_tgt[0, :4] = src[0], tgt[0]
    batch_src[1], batch_tgt[1] = other_src[0], other_tgt[0]
    batched = model(batch_src, batch_tgt, need_weights=True)
    assert torch.allclose(batched.logits[0, :4], alone.logits[0], atol=1e-5)
    one = alone.attention.sentence(0, 5, 4)
    padded = batched.attention.sentence(0, 5, 4)
    for family in ("encoder_self", "decoder_self", "cross"):
        assert padded.family(family).shape == one.family(family).shape
        assert abs(padded.family(family) - one.family(family)).max() < 1e-5, family
    # Padded keys receive exactly zero weight.
    assert batched.attention.encoder_self[0, ..., 5:].abs().max() == 0
    assert batched.attention.cross[0, ..., 5:].abs().max() == 0


def test_attention_rows_are_distributions():
    model = make_model()
    src = torch.tensor([[5, 6, 7, 3, 0, 0], [5, 6, 7, 8, 9, 3]])
    tgt = torch.tensor([[2, 9, 10, 0], [2, 9, 10, 11]])
    maps = model(src, tgt, need_weights=True).attention
    shapes = {"encoder_self": (2, 2, 4, 6, 6), "decoder_self": (2, 2, 4, 4, 4), "cross": (2, 2, 4, 4, 6)}
    for family, shape in shapes.items():
        weights = getattr(maps, family)
        assert tuple(weights.shape) == shape, family
        assert torch.allclose(weights.sum(-1), torch.ones(shape[:-1]), atol=1e-5), family
        assert weights.min() >= 0


@pytest.mark.parametrize("overrides", VARIANTS)
def test_fused_path_equals_explicit_path(overrides):
    model = make_model(**overrides)
    src = torch.tensor([[5, 6, 7, 3, 0, 0], [5, 6, 7, 8, 9, 3]])
    tgt = torch.tensor([[2, 9, 10, 0], [2, 9, 10, 11]])
    fused = model(src, tgt)
    explicit = model(src, tgt, need_weights=True)
    assert fused.attention is None, "weights must not be computed when not requested"
    assert explicit.attention is not None, "requested weights must be produced"
    assert torch.allclose(fused.logits, explicit.logits, atol=1e-5)


def test_attention_module_fused_equals_explicit_with_masks():
    torch.manual_seed(1)
    attention = MultiHeadAttention(24, 3).eval()
    x, memory = torch.randn(2, 5, 24), torch.randn(2, 7, 24)
    key_mask = torch.tensor([[True] * 7, [True] * 4 + [False] * 3]).view(2, 1, 1, 7)
    for query, source, mask in ((x, memory, key_mask), (x, x, causal_mask(5, x.device))):
        fused = attention(query, source, mask)
        explicit = attention(query, source, mask, need_weights=True)
        assert torch.allclose(fused.output, explicit.output, atol=1e-6)
        assert fused.weights is None and explicit.weights is not None


def test_causal_flag_uses_sdpa_is_causal_and_equals_the_mask(monkeypatch):
    """The decoder's teacher-forced self-attention tells SDPA `is_causal` (the flash kernel on CUDA) instead of
    handing it the bool mask, and gets the numbers the explicit mask gives."""
    torch.manual_seed(2)
    attention = MultiHeadAttention(24, 3).eval()
    x = torch.randn(2, 6, 24)
    mask = causal_mask(6, x.device)
    calls = []
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append((kwargs.get("is_causal", False), kwargs.get("attn_mask")))
        return sdpa(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", spy)
    flagged = attention(x, x, mask, causal=True)
    assert calls == [(True, None)], "the causal flag must reach SDPA as is_causal, without the mask"
    explicit = attention(x, x, mask, need_weights=True)
    assert torch.allclose(flagged.output, explicit.output, atol=1e-6)

    calls.clear()
    model = make_model()
    model(torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 9, 10, 11]]))
    n_dec = model.config.n_decoder_layers
    assert sum(flag for flag, _ in calls) == n_dec, "each decoder layer's self-attention is the causal one"


@pytest.mark.parametrize("overrides", VARIANTS)
def test_incremental_decoding_with_cache_equals_full_recompute(overrides):
    model = make_model(**overrides)
    src = torch.tensor([[5, 6, 7, 3, 0], [5, 6, 7, 8, 3]])
    tgt = torch.tensor([[2, 9, 10, 11, 12, 13], [2, 14, 15, 16, 17, 18]])
    full = torch.log_softmax(model(src, tgt).logits, -1)
    encoded = model.encode(src)
    cache = model.start_decoding(encoded)
    for t in range(tgt.shape[1]):
        step, cache = model.decode_step(tgt[:, t], cache)
        assert torch.allclose(step, full[:, t], atol=1e-5), f"step {t}"
    assert cache.self_kv[0].length == tgt.shape[1]


def test_cache_reorder_follows_rows():
    model = make_model()
    src = torch.tensor([[5, 6, 7, 3], [8, 9, 10, 3]])
    cache = model.start_decoding(model.encode(src))
    _, cache = model.decode_step(torch.tensor([2, 2]), cache)
    swapped = cache.select(torch.tensor([1, 0, 1]))
    step, _ = model.decode_step(torch.tensor([20, 21, 20]), swapped)
    direct_cache = model.start_decoding(model.encode(src[[1, 0, 1]]))
    _, direct_cache = model.decode_step(torch.tensor([2, 2, 2]), direct_cache)
    direct, _ = model.decode_step(torch.tensor([20, 21, 20]), direct_cache)
    assert torch.allclose(step, direct, atol=1e-5)


@pytest.mark.parametrize("family,layer", [("encoder_self", 1), ("decoder_self", 0), ("cross", 1)])
def test_internals_reproduce_the_weights(family, layer):
    model = make_model()
    src = torch.tensor([[5, 6, 7, 8, 3]])
    tgt = torch.tensor([[2, 9, 10, 11]])
    out = model(src, tgt, need_weights=True, inspect=(family, layer))
    internals = out.internals
    assert internals is not None
    expected = getattr(out.attention, family)[:, layer]
    assert torch.allclose(internals.weights, expected, atol=1e-6)
    d_k = internals.query.shape[-1]
    assert torch.allclose(internals.scaled_scores, internals.scores / math.sqrt(d_k))
    assert torch.allclose(internals.head_outputs, internals.weights @ internals.value, atol=1e-6)
    if family == "decoder_self":
        assert torch.isinf(internals.masked_scores[0, 0, 0, 1:]).all(), "causal mask hides the future"


def test_too_long_input_is_a_clear_error():
    model = make_model()
    with pytest.raises(ValueError, match="at most 40"):
        model(torch.randint(4, 50, (1, 41)), torch.tensor([[2]]))


def test_parameter_count_formula_matches_modules():
    for overrides in VARIANTS:
        model = make_model(**overrides)
        assert sum(p.numel() for p in model.parameters()) == count_parameters(model.config), overrides
    small = preset("small", vocab_size=8000)
    assert sum(p.numel() for p in Transformer(small).parameters()) == count_parameters(small)


def test_config_rejects_nonsense():
    with pytest.raises(ValueError, match="not divisible"):
        ModelConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="positional"):
        ModelConfig(positional="rotary")
    with pytest.raises(ValueError, match="unknown fields"):
        ModelConfig.from_dict({"d_model": 8, "flux": 1})
