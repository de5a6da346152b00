"""The config fields imported models need: validated one by one, absent from our own checkpoints' config.json, and
decoded either exactly by the fast path or by the reference path (never differently). Needs no transformers."""

from __future__ import annotations

import pytest
import torch

from explorer.config import ModelConfig
from explorer.decoding.policy import length_penalty, normalized_score
from explorer.fastpath.packed_decoding import supports_packed
from explorer.inference import translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer

OLD_FIELDS = {
    *("vocab_size", "d_model", "n_heads", "d_ff", "n_encoder_layers", "n_decoder_layers", "d_k", "d_v", "dropout"),
    *("max_len", "positional", "norm_position", "share_embeddings", "pad_id", "bos_id", "eos_id"),
}
TINY = {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_encoder_layers": 2, "n_decoder_layers": 2, "dropout": 0.0}


def test_our_checkpoints_write_the_config_they_always_wrote():
    assert set(ModelConfig().to_dict()) == OLD_FIELDS
    imported = ModelConfig(activation="swish", output_bias=True, length_normalisation="power")
    assert ModelConfig.from_dict(imported.to_dict()) == imported


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"activation": "tanh"}, "activation must be one of"),
        ({"position_layout": "sines"}, "position_layout must be one of"),
        ({"length_normalisation": "average"}, "length_normalisation must be one of"),
        ({"output_bias": "yes"}, "output_bias must be true or false"),
        ({"ban_pad": 1}, "ban_pad must be true or false"),
        ({"target_prefix": "kor"}, "target_prefix must be a target-language token"),
        ({"target_vocab_size": 100}, "share_embeddings ties every embedding"),
        ({"share_embeddings": False, "target_vocab_size": 3}, "target_vocab_size must be a whole number"),
        ({"positional": "learned", "position_layout": "split"}, "position_layout applies to sinusoidal"),
    ],
)
def test_new_fields_are_refused_by_name(fields, named):
    with pytest.raises(ValueError, match=named):
        ModelConfig(**fields)


def test_power_length_normalisation_is_score_over_length_to_the_alpha():
    assert length_penalty(4, 1.0, "power") == 4.0
    assert normalized_score(-2.0, 4, 0.5, "power") == -1.0
    assert length_penalty(4, 0.6) == ((5 + 4) / 6) ** 0.6  # GNMT's, the default


def _tokenizer() -> Tokenizer:
    return Tokenizer.train([f"w{i} w{(i * 7) % 30} w{(i * 3) % 30}" for i in range(60)], 40, model_type="word")


def _model(**fields) -> Transformer:
    torch.manual_seed(0)
    tokenizer = _tokenizer()
    return Transformer(ModelConfig(vocab_size=tokenizer.vocab_size, max_len=32, **TINY, **fields)).eval()


MARIAN = {"activation": "swish", "output_bias": True, "ban_pad": True, "position_layout": "split"}


@pytest.mark.parametrize(
    "fields",
    [
        {"position_layout": "split"},
        {"share_embeddings": False, "tie_target_output": True},
        {"share_embeddings": False},
        {"activation": "swish"},
        {"activation": "gelu"},
        {"output_bias": True},
        {"ban_pad": True},
        MARIAN,
    ],
    ids=[
        "split positions",
        "tied target output",
        "separate target embedding",
        "swish",
        "gelu",
        "logits bias",
        "pad banned",
        "every Marian switch",
    ],
)
def test_fast_path_decodes_every_switch_exactly(fields, one_torch_thread):
    model, tokenizer = _model(**fields), _tokenizer()
    if model.config.output_bias:
        with torch.no_grad():  # a bias that changes the choice (a zero one would not show a missing bias)
            model.logits_bias.copy_(torch.randn(model.logits_bias.shape, generator=torch.Generator().manual_seed(1)))
    assert supports_packed(model)
    texts = [f"w{i} w{i + 1} w{i + 2}" for i in range(12)]
    for beam in (1, 3):
        fast = translate(model, tokenizer, texts, beam_size=beam)
        model.train()  # the reference path (dropout is 0: the same function)
        reference = translate(model, tokenizer, texts, beam_size=beam)
        model.eval()
        # As tests/fastpath holds the packed path to the reference: the same tokens, scores within rounding.
        assert [t.output_ids for t in fast] == [t.output_ids for t in reference]
        assert [t.log_prob for t in fast] == pytest.approx([t.log_prob for t in reference], rel=1e-5, abs=1e-5)


def test_fast_path_declines_int8_feed_forward_without_relu():
    from explorer.quantize import quantize_int8

    assert supports_packed(quantize_int8(_model()))
    assert not supports_packed(quantize_int8(_model(activation="swish")))


def test_banned_pad_is_never_generated(one_torch_thread):
    model, tokenizer = _model(ban_pad=True), _tokenizer()
    with torch.no_grad():
        model.embedding.weight[model.config.pad_id] = model.embedding.weight.abs().max() * 50  # pad: always best
    for beam in (1, 3):
        for translation in translate(model, tokenizer, ["w1 w2", "w3 w4 w5"], beam_size=beam):
            assert model.config.pad_id not in translation.output_ids
