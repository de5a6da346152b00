"""The cross-attention folded with the encoder memory (`explorer/fastpath/folded_cross.py`) computes the same step.

Folding is chosen by size (`worth_folding`); the tiny test models here would not fold two sentences, so each
test forces the choice both ways and holds the folded step to `Transformer.decode_step`, through the beam's
reorderings (rows of one sentence apart, and whole beams), with head masks (whose switched-off cross heads
take the unfolded path), and on the shipped model's real sentences, against the reference outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import explorer.fastpath.packed_decoding as packed_decoding
from explorer.fastpath.folded_cross import fold_cross, worth_folding
from explorer.fastpath.packed_decoding import PackedDecoder
from explorer.model import HeadMask
from tests.engine.test_model import VARIANTS, make_model

SRC = torch.tensor([[5, 6, 7, 3, 0], [5, 6, 7, 8, 3]])
TGT = torch.tensor([[2, 9, 10, 11, 12, 13], [2, 14, 15, 16, 17, 18]])
# Reorderings after steps 0, 1, 2, …: rows of one sentence apart (one memory per row), then whole beams; and one
# sentence's beam (one memory for every row, the products without a batch dimension), decoding SRC[:1] only.
SCHEDULES = {
    "rows": [[1, 0, 1], [0, 2], [0, 1]],
    "beams": [[0, 0, 0, 1, 1, 1], [2, 0, 1, 5, 5, 3], [1, 1, 0, 3, 4, 5], [0, 1, 2, 3, 4, 5]],
    "one sentence": [[0, 0, 0], [2, 0, 1], [1, 1, 0], [0, 2]],
}


@pytest.fixture(params=[True, False], ids=["folded", "unfolded"])
def folding(request, monkeypatch):
    monkeypatch.setattr(packed_decoding, "worth_folding", lambda *sizes: request.param)
    return request.param


def _run(model, decoder, schedule, head_mask=None):
    sentences = 1 if schedule == "one sentence" else len(SRC)
    encoded = model.encode(SRC[:sentences], head_mask=head_mask)
    cache, packed_cache = model.start_decoding(encoded), decoder.start(encoded)
    tokens = TGT[:sentences, 0]
    for t, keep in enumerate([*SCHEDULES[schedule], None]):
        plain, cache = model.decode_step(tokens, cache, head_mask=head_mask)
        packed, packed_cache = decoder.step(tokens, packed_cache, head_mask=head_mask)
        torch.testing.assert_close(packed, plain, rtol=1e-5, atol=1e-5, msg=f"step {t}")
        assert torch.equal(packed.argmax(-1), plain.argmax(-1)), f"step {t}"
        if keep is None:
            return packed_cache
        rows = torch.tensor(keep)
        cache, packed_cache = cache.select(rows), packed_cache.select(rows)
        tokens = TGT.flatten()[(rows + t + 1) % TGT.numel()]
    raise AssertionError("the schedule ends with None")


@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("overrides", [v for v in VARIANTS if v.get("d_k") == v.get("d_v")])
@torch.inference_mode()
def test_folded_steps_equal_decode_step_through_reordering(overrides, schedule, folding):
    model = make_model(**overrides).eval()
    last = _run(model, PackedDecoder(model), schedule)
    assert (last.folded is not None) == folding, "the cache keeps its folded matrices through every reordering"
    if folding:  # one set of folded matrices per memory the cache holds, as many as its cross keys/values
        assert last.folded.scores.shape[1] == last.cross_kv.shape[2] == last.src_mask.shape[0]


@pytest.mark.parametrize("schedule", ["beams", "one sentence"])
@pytest.mark.parametrize("heads", [["cross.1.2", "cross.0.0"], ["dec.0.1", "enc.1.2"]], ids=["cross", "other"])
@torch.inference_mode()
def test_a_head_mask_on_a_folded_cache_gives_the_general_paths_step(heads, schedule, folding):
    """Switched-off cross heads are gated before W^O, which folding multiplies out: those layers take the
    unfolded path; layers without a cross gate, and masks on other families, keep the folded one."""
    model = make_model().eval()
    mask = HeadMask.from_names(heads, model.config)
    _run(model, PackedDecoder(model), schedule, head_mask=mask)


@torch.inference_mode()
def test_folded_matrices_are_the_products_they_stand_for():
    """scores·h = (h W_h^Q + b_h^Q) K_h^T / √d_k and weights·values = Σ_h p_h V_h W_h^O, per head, by hand."""
    model = make_model().eval()
    decoder = PackedDecoder(model)
    encoded = model.encode(SRC)
    cache = decoder.start(encoded)
    folded = fold_cross(cache.cross_kv, cache.src_mask, decoder.cross_fold)
    attention = model.decoder_layers[1].cross_attention
    keys, values = cache.cross_kv[1, 0, 0], cache.cross_kv[1, 1, 0]  # sentence 0: (heads, src, d_k)
    heads, src, d_k = keys.shape
    h = torch.randn(32)
    q = attention.w_q(h).view(heads, d_k)
    by_hand = torch.einsum("hk,hjk->hj", q, keys) / d_k**0.5 + cache.src_mask[0].view(1, src)
    scores = folded.scores[1, 0] @ h + folded.scores_bias[1, 0, 0]
    torch.testing.assert_close(scores.view(heads, src), by_hand, rtol=1e-5, atol=1e-5)
    p = torch.softmax(by_hand, dim=-1)
    heads_out = torch.einsum("hj,hjk->hk", p, values).reshape(heads * d_k)
    torch.testing.assert_close(p.reshape(-1) @ folded.values[1, 0] + folded.out_bias[1, 0, 0], attention.w_o(heads_out))


def test_folding_pays_for_one_sentence_not_for_a_batch():
    """The shipped shape (4 heads, d_model 256): a 15-token sentence folds, and a 64-token one just does; 32
    sentences, or one of 65 tokens, keep W^Q and W^O (their folded matrices would be larger than the weights)."""
    assert worth_folding(1, 4, 15, 256)
    assert worth_folding(1, 4, 64, 256)
    assert not worth_folding(1, 4, 65, 256)
    assert not worth_folding(32, 4, 15, 256)


REPO = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO / "checkpoints" / "multi30k-en-de"


@pytest.mark.slow
@pytest.mark.parametrize("search, beam", [("greedy", 1), ("beam4", 4)])
def test_one_sentence_at_a_time_gives_the_reference_outputs(search, beam):
    """What the app does for a typed sentence: one sentence, folded. The reference was written in batches of
    32 (not folded) by the search before the speed work (tests/fastpath/test_search_identical.py)."""
    if not (CHECKPOINT / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    from explorer.checkpoint import load_checkpoint
    from explorer.inference import translate

    data = json.loads((REPO / "tests" / "data" / "search_reference_test2016.json").read_text(encoding="utf-8"))
    c = load_checkpoint(CHECKPOINT, "cpu")
    with torch.inference_mode():
        cache = packed_decoding.packed_decoder(c.model).start(c.model.encode(torch.tensor([[5, 6, 7, 3]])))
    assert cache.folded is not None, "a short sentence of the shipped model decodes folded"
    expected = data["searches"][search]
    for sentence, e in zip(data["sentences"], expected, strict=True):
        (found,) = translate(c.model, c.tokenizer, [sentence], beam_size=beam, batch_size=1)
        assert found.output_ids == e["output_ids"], sentence
        assert found.score == pytest.approx(e["score"], rel=1e-5, abs=1e-5)
