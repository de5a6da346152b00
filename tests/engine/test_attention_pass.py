"""The attention maps a translation carries come from one teacher-forced pass without the output projection
(`Transformer.attention_maps`): the same maps, to the bit, as `forward(need_weights=True)`, and the same maps and
tokens whichever path decoded the sentence (the packed fast path, which now also decodes imported models' swish,
logits bias and banned `<pad>`, or the reference path)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.config import ModelConfig
from explorer.inference import translate
from explorer.model import Transformer
from explorer.paper import FAMILIES
from explorer.tokenizer import Tokenizer

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints" / "multi30k-en-de"
MARIAN_LIKE = {"activation": "swish", "output_bias": True, "ban_pad": True, "position_layout": "split"}
TINY = {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_encoder_layers": 2, "n_decoder_layers": 2, "dropout": 0.0}


def _marian_like() -> tuple[Transformer, Tokenizer]:
    tokenizer = Tokenizer.train([f"w{i} w{(i * 7) % 30} w{(i * 3) % 30}" for i in range(60)], 40, model_type="word")
    torch.manual_seed(0)
    model = Transformer(ModelConfig(vocab_size=tokenizer.vocab_size, max_len=32, **TINY, **MARIAN_LIKE)).eval()
    with torch.no_grad():
        model.logits_bias.normal_()
    return model, tokenizer


def _models() -> list[tuple[str, Transformer, Tokenizer]]:
    models = [("Marian-like", *_marian_like())]
    if SHIPPED.is_dir():
        checkpoint = load_checkpoint(SHIPPED, "cpu")
        models.append(("shipped", checkpoint.model, checkpoint.tokenizer))
    return models


@pytest.fixture(scope="module", params=["Marian-like", "shipped"])
def model_and_tokenizer(request):
    found = {name: (model, tokenizer) for name, model, tokenizer in _models()}
    if request.param not in found:
        pytest.skip("no English→German checkpoint shipped")
    return found[request.param]


def test_attention_maps_are_forwards_maps_to_the_bit(model_and_tokenizer):
    model, _ = model_and_tokenizer
    config = model.config
    src = torch.tensor([[5, 6, 7, 8, config.eos_id], [9, 10, config.eos_id, config.pad_id, config.pad_id]])
    tgt = torch.tensor([[config.bos_id, 11, 12, 13], [config.bos_id, 14, config.pad_id, config.pad_id]])
    with torch.inference_mode():
        full = model(src, tgt, need_weights=True).attention
        maps = model.attention_maps(src, tgt)
    assert full is not None
    for family in FAMILIES:
        assert torch.equal(getattr(maps, family), getattr(full, family))


def test_translation_and_maps_match_the_reference_path(model_and_tokenizer, one_torch_thread):
    model, tokenizer = model_and_tokenizer
    texts = ["w1 w2 w3", "w4 w5", "a man rides a bike .", "two dogs play in the snow ."]
    fast = translate(model, tokenizer, texts, with_attention=True)
    model.train()  # the reference path: Transformer.encode and decode_step (dropout is 0 in evaluation anyway)
    try:
        reference = _reference(model, tokenizer, texts)
    finally:
        model.eval()
    assert [t.output_ids for t in fast] == [t.output_ids for t in reference]
    assert [t.log_prob for t in fast] == pytest.approx([t.log_prob for t in reference], rel=1e-5, abs=1e-5)
    for ours, theirs in zip(fast, reference, strict=True):
        assert ours.attention is not None and theirs.attention is not None
        for family in FAMILIES:
            np.testing.assert_allclose(ours.attention.family(family), theirs.attention.family(family), atol=1e-6)


def _reference(model: Transformer, tokenizer: Tokenizer, texts: list[str]):
    dropout = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    rates = [m.p for m in dropout]
    for m in dropout:
        m.p = 0.0  # the shipped model trains with dropout: off, so the reference path computes the same function
    try:
        return translate(model, tokenizer, texts, with_attention=True)
    finally:
        for m, rate in zip(dropout, rates, strict=True):
            m.p = rate
