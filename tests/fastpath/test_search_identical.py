"""The fast decoding path gives the outputs the search gave before it: outputs stay identical.

`tests/data/search_reference_test2016.json` was written by `python -m tests.data.make_search_reference` with the
search and model as they were before the speed work: the first 200 Multi30k test2016 sentences through the
shipped checkpoint, greedy and beam 4, batches of 32. Each time the shipped weights were replaced, the search
first reproduced the old file exactly on the old weights, and the file was then rewritten on the new weights
by the same command; the plain search (recomputing the whole prefix each step, no cache, no folded
cross-attention; `benchmarks.decoding.decode_all(..., "recompute")`) gave the same 200/200 outputs, greedy and
beam 4.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.inference import PackedScorer, scorer_for, translate

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "data" / "search_reference_test2016.json"
CHECKPOINT = REPO / "checkpoints" / "multi30k-en-de"


@pytest.fixture(scope="module")
def reference(multi30k_root):
    if not (CHECKPOINT / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data, load_checkpoint(CHECKPOINT, "cpu")


@pytest.mark.slow
@pytest.mark.parametrize("search, beam", [("greedy", 1), ("beam4", 4)])
def test_fast_search_gives_the_old_outputs_on_200_test_sentences(reference, search, beam):
    data, c = reference
    found = translate(c.model, c.tokenizer, data["sentences"], beam_size=beam, batch_size=32)
    expected = data["searches"][search]
    same = sum(t.output_ids == e["output_ids"] for t, e in zip(found, expected, strict=False))
    assert same == len(expected) == 200, f"{same}/200 outputs identical to the old search"
    for t, e in zip(found, expected, strict=False):
        assert t.finished == e["finished"]
        assert t.score == pytest.approx(e["score"], rel=1e-5, abs=1e-6)
        assert t.log_prob == pytest.approx(e["log_prob"], rel=1e-5, abs=1e-6)


@pytest.mark.slow
def test_one_typed_sentence_at_a_time_gives_the_old_greedy_outputs(reference):
    """The pages translate one sentence at a time: the one-row greedy path (`search._greedy_one`) and the folded
    cross-attention (one sentence only) give the batched reference's tokens, log-probs and score."""
    data, c = reference
    expected = data["searches"]["greedy"][:60]
    for sentence, e in zip(data["sentences"][:60], expected, strict=True):
        (t,) = translate(c.model, c.tokenizer, [sentence], beam_size=1, batch_size=1)
        assert t.output_ids == e["output_ids"], sentence
        assert t.finished == e["finished"]
        assert t.score == pytest.approx(e["score"], rel=1e-5, abs=1e-6)
        assert t.log_prob == pytest.approx(e["log_prob"], rel=1e-5, abs=1e-6)


def test_translate_uses_the_packed_decoder_with_or_without_a_head_mask(reference):
    from explorer.model import HeadMask

    _, c = reference
    src = torch.tensor([[5, 6, 7, c.config.eos_id]])
    assert isinstance(scorer_for(c.model, src), PackedScorer)
    assert isinstance(scorer_for(c.model, src, HeadMask()), PackedScorer)
