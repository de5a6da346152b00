"""Head masks on the packed decoder: a masked re-decode takes the fast path and gives the general
path's outputs, over encoder, decoder and cross masks, zero- and mean-ablation, greedy and beam: the same tokens,
and scores equal to float32 rounding (the packed decoder's output projection reads the tied embedding in an
(in, out) copy, which MKL sums in another order than the general path's `hidden @ weight.t()`)."""

from __future__ import annotations

import pytest
import torch

from explorer.decoding.search import beam_search, greedy_search
from explorer.fastpath.packed_decoding import packed_decoder
from explorer.inference import ModelScorer, PackedScorer, scorer_for
from explorer.model import HeadMask, HeadMeans, Transformer
from explorer.model.head_mask import HeadSelection
from tests.engine.test_head_mask import SRC, all_kept, make_model

TGT = torch.tensor([[2, 9, 10, 11, 12, 13], [2, 14, 15, 16, 17, 18]])
MASKS = {
    "enc": ["enc.1.2"],
    "dec": ["dec.0.1", "dec.2.3"],
    "cross": ["cross.1.2", "cross.2.0"],
    "all families": ["enc.0.0", "dec.1.1", "cross.0.3", "cross.2.1"],
}


def mask_for(model: Transformer, family: str, mode: str) -> HeadMask:
    config = model.config
    means = None
    if mode == "mean":
        generator = torch.Generator().manual_seed(1)
        d_v, heads = config.d_model // config.n_heads, config.n_heads

        def table(layers: int) -> torch.Tensor:
            return torch.randn(layers, heads, d_v, generator=generator)

        decoder_layers = config.n_decoder_layers
        means = HeadMeans(table(config.n_encoder_layers), table(decoder_layers), table(decoder_layers))
    return HeadMask.from_names(MASKS[family], config, means=means)


# Reorderings after steps 0, 1, 2, …: rows repeated and dropped one by one (the cross-attention runs per row),
# or whole beams of 3 per sentence (the rows of a beam are the queries of one cross-attention call).
SCHEDULES = {
    "rows": [[1, 0, 1], [0, 2], [0, 1]],
    "beams": [[0, 0, 0, 1, 1, 1], [2, 0, 1, 5, 5, 3], [1, 1, 0, 3, 4, 5], [0, 1, 2, 3, 4, 5]],
}


@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("family", list(MASKS))
@torch.inference_mode()
def test_packed_steps_with_a_mask_equal_decode_step(family, mode, schedule):
    model = make_model()
    mask = mask_for(model, family, mode)
    encoded = model.encode(SRC, head_mask=mask)
    decoder = packed_decoder(model)
    cache, packed_cache = model.start_decoding(encoded), decoder.start(encoded)
    plain_cache = decoder.start(model.encode(SRC))
    tokens = TGT[:, 0]
    for t, keep in enumerate([*SCHEDULES[schedule], None]):
        general, cache = model.decode_step(tokens, cache, head_mask=mask)
        packed, packed_cache = decoder.step(tokens, packed_cache, head_mask=mask)
        unmasked, plain_cache = decoder.step(tokens, plain_cache)
        assert torch.allclose(general, packed, atol=1e-5), f"step {t}, {family}, {mode}"
        assert torch.equal(general.argmax(-1), packed.argmax(-1)), f"step {t}, {family}, {mode}"
        assert not torch.allclose(packed, unmasked, atol=1e-4), f"step {t}: the mask changed nothing"
        if keep is None:
            break
        rows = torch.tensor(keep)
        cache, packed_cache, plain_cache = cache.select(rows), packed_cache.select(rows), plain_cache.select(rows)
        tokens = torch.arange(9, 9 + len(keep))
    assert SCHEDULES[schedule] != SCHEDULES["beams"] or packed_cache.group_size == 3, "the beams stayed grouped"


@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("family", list(MASKS))
@pytest.mark.parametrize("beam", [1, 3])
@torch.inference_mode()
def test_search_with_a_mask_is_the_same_on_the_packed_and_the_general_path(beam, family, mode):
    model = make_model()
    config = model.config
    mask = mask_for(model, family, mode)
    encoded = model.encode(SRC, head_mask=mask)
    decoder = packed_decoder(model)
    scorers = {
        "general": ModelScorer(model, model.start_decoding(encoded), mask),
        "packed": PackedScorer(decoder, decoder.start(encoded), mask),
        "unmasked": PackedScorer(decoder, decoder.start(model.encode(SRC))),
    }
    found = {}
    for name, scorer in scorers.items():
        if beam == 1:
            found[name] = greedy_search(scorer, 2, config.bos_id, config.eos_id, 12)
        else:
            results = beam_search(scorer, 2, beam, config.bos_id, config.eos_id, 12)
            found[name] = [h for r in results for h in r.hypotheses]
    # The same sums in another order (the output projection's layout; for a beam, one cross-attention call over
    # its rows): the same tokens, scores equal to float32 rounding, as without a mask.
    for packed, general in zip(found["packed"], found["general"], strict=True):
        assert packed.tokens == general.tokens and packed.finished == general.finished
        assert packed.token_log_probs == pytest.approx(general.token_log_probs, rel=1e-5, abs=1e-6)
        assert packed.score == pytest.approx(general.score, rel=1e-5, abs=1e-6)
    assert [h.token_log_probs for h in found["packed"]] != [h.token_log_probs for h in found["unmasked"]]


@torch.inference_mode()
def test_empty_and_encoder_only_masks_leave_the_packed_step_bitwise_unchanged():
    """Nothing off in the decoder: the step runs exactly the unmasked operations (the gate is never applied)."""
    model = make_model()
    config = model.config
    decoder = packed_decoder(model)
    encoded = model.encode(SRC)
    means = HeadMeans(torch.randn(2, 4, 8), torch.randn(3, 4, 8), torch.randn(3, 4, 8))
    encoder_only = HeadMask.from_names(["enc.0.1"], config)  # acts in `encode`, not in a decoder step
    for mask in (HeadMask(), all_kept(config), HeadMask(means=means), HeadMask.parse("none", config), encoder_only):
        plain_cache, masked_cache = decoder.start(encoded), decoder.start(encoded)
        for t in range(TGT.shape[1]):
            plain, plain_cache = decoder.step(TGT[:, t], plain_cache)
            masked, masked_cache = decoder.step(TGT[:, t], masked_cache, head_mask=mask)
            assert torch.equal(plain, masked), f"step {t}, {mask}"


@torch.inference_mode()
def test_the_gate_runs_only_for_modules_with_a_head_off(monkeypatch):
    """The unmasked step pays nothing for mask support; a masked one gates only the layers with a head off."""
    model = make_model()
    decoder = packed_decoder(model)
    calls: list[int] = []
    apply = HeadSelection.apply
    monkeypatch.setattr(HeadSelection, "apply", lambda self, heads: calls.append(heads.shape[1]) or apply(self, heads))
    cache = decoder.start(model.encode(SRC))
    for t in range(3):
        _, cache = decoder.step(TGT[:, t], cache)
    assert calls == []
    mask = HeadMask.from_names(["dec.0.1", "cross.2.0", "cross.2.3"], model.config)
    cache = decoder.start(model.encode(SRC, head_mask=mask))
    for t in range(3):
        _, cache = decoder.step(TGT[:, t], cache, head_mask=mask)
    assert len(calls) == 3 * 2, "two modules have a head off (dec.0 and cross.2), each gated once per step"


def test_a_masked_re_decode_takes_the_packed_path():
    model = make_model()
    src = torch.tensor([[5, 6, 7, model.config.eos_id]])
    for mask in (None, HeadMask(), HeadMask.from_names(["cross.2.0", "enc.0.3"], model.config)):
        scorer = scorer_for(model, src, mask)
        assert isinstance(scorer, PackedScorer) and scorer.head_mask is mask
