"""The packed encoder computes `Transformer.encode` (to float32 rounding: oneDNN sums in another order), in every
model variant the packed path supports, with and without a head mask, and follows weights changed in place."""

from __future__ import annotations

import pytest
import torch

from explorer.fastpath.packed_decoding import packed_decoder
from explorer.fastpath.packed_encoding import packed_encoder
from explorer.inference import PackedScorer, scorer_for
from tests.engine.test_head_mask import make_model as make_masked_model
from tests.engine.test_model import VARIANTS, make_model
from tests.fastpath.test_packed_head_mask import mask_for

# Padding in the first sentence: a padded key must get no weight, as in `Transformer.encode`.
SRC = torch.tensor([[5, 6, 7, 3, 0, 0], [5, 6, 7, 8, 9, 3]])


@pytest.mark.parametrize("overrides", [v for v in VARIANTS if v.get("d_k") == v.get("d_v")])
@torch.inference_mode()
def test_packed_memory_equals_encode(overrides):
    model = make_model(**overrides).eval()
    plain, packed = model.encode(SRC), packed_encoder(model).encode(SRC)
    torch.testing.assert_close(packed.memory, plain.memory, rtol=1e-5, atol=1e-5)
    assert torch.equal(packed.src_mask, plain.src_mask)
    # The real tokens do not read the padding: the first sentence's memory without its padding is the same.
    alone = packed_encoder(model).encode(SRC[:1, :4]).memory
    torch.testing.assert_close(alone[0], packed.memory[0, :4], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["zero", "mean"])
@torch.inference_mode()
def test_packed_encoder_masks_the_same_heads(mode):
    model = make_masked_model().eval()
    mask = mask_for(model, "enc", mode)
    plain, packed = model.encode(SRC, head_mask=mask), packed_encoder(model).encode(SRC, mask)
    torch.testing.assert_close(packed.memory, plain.memory, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(packed.memory, model.encode(SRC).memory, atol=1e-4), "the mask changed nothing"


def test_a_weight_changed_in_place_rebuilds_both_packed_paths():
    """One mechanism (`packing.cached`) for both: any weight of the model, here an encoder one, rebuilds the
    encoder's and the decoder's packings, and the new encoder reads the new weight."""
    model = make_model().eval()
    encoder, decoder = packed_encoder(model), packed_decoder(model)
    assert packed_encoder(model) is encoder and packed_decoder(model) is decoder
    with torch.no_grad():
        model.encoder_layers[0].feed_forward.w_1.weight.mul_(1.5)
    assert packed_encoder(model) is not encoder and packed_decoder(model) is not decoder
    with torch.inference_mode():
        memory = packed_encoder(model).encode(SRC).memory
        torch.testing.assert_close(memory, model.encode(SRC).memory, rtol=1e-5, atol=1e-5)


def test_a_model_in_training_mode_encodes_with_dropout_on_the_general_path():
    model = make_model().train()
    assert not isinstance(scorer_for(model, SRC), PackedScorer)
    with pytest.raises(AssertionError, match="training"):
        packed_encoder(model).encode(SRC)


def test_a_model_with_an_int8_encoder_layer_stays_on_the_general_path(monkeypatch):
    """The packed encoder reads float weights: one quantized encoder layer is enough to keep the whole search
    on the general path (the check used to look at the decoder's layers only)."""
    from explorer import quantize

    model = make_model().eval()
    monkeypatch.setattr(quantize, "quantized_layer_names", lambda m: ["encoder_layers.0.feed_forward.w_1"])
    int8 = quantize.quantize_int8(model)
    assert quantize.is_quantized(int8)
    assert not isinstance(scorer_for(int8, SRC), PackedScorer)


def test_scorer_for_reads_the_weight_versions_once_for_the_encoder_and_the_decoder(monkeypatch):
    """Each read walks every parameter (about 10 µs for the shipped model, paid by every typed sentence): one
    read serves both packed paths, and a weight changed in place still rebuilds both."""
    from explorer import inference
    from explorer.fastpath import packing

    model = make_model().eval()
    reads = []
    real = packing.weight_versions

    def counted(m):
        reads.append(m)
        return real(m)

    monkeypatch.setattr(inference, "weight_versions", counted, raising=False)
    monkeypatch.setattr(packing, "weight_versions", counted)
    with torch.inference_mode():
        first = scorer_for(model, SRC)
    assert len(reads) == 1
    assert isinstance(first, PackedScorer) and first.decoder is packed_decoder(model)
    with torch.no_grad():
        model.decoder_layers[0].feed_forward.w_2.weight.mul_(0.5)
    with torch.inference_mode():
        second = scorer_for(model, SRC)
    assert isinstance(second, PackedScorer) and second.decoder is not first.decoder


@torch.inference_mode()
def test_a_sentence_without_padding_encodes_as_it_does_beside_a_padded_one():
    """Without padding the encoder's attention runs with no mask (a mask of zeros adds nothing): the memory is
    the one the same sentence gets in a padded batch, to float32 rounding, and the mask it hands on is all kept."""
    model = make_model().eval()
    alone = packed_encoder(model).encode(SRC[1:])
    batched = packed_encoder(model).encode(SRC)
    torch.testing.assert_close(alone.memory[0], batched.memory[1], rtol=1e-5, atol=1e-5)
    assert alone.src_mask.all() and not batched.src_mask.all()
    torch.testing.assert_close(alone.memory, model.encode(SRC[1:]).memory, rtol=1e-5, atol=1e-5)


def test_an_overlong_source_is_refused_with_the_model_s_message():
    model = make_model().eval()
    too_long = torch.full((1, model.config.max_len + 1), 5)
    with torch.inference_mode(), pytest.raises(ValueError, match="source has"):
        packed_encoder(model).encode(too_long)
