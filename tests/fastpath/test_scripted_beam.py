"""One sentence's beam search in one TorchScript call (`scripted_decoding.beam_loop`), on MKL's kernels and on
oneDNN's: the same n-best as the Python search over the same steps, to the bit (tokens, per-token log-probabilities,
totals, scores, finished), with hypotheses finishing, pruned EOS, cut at the length limit and a buffer that grows;
it makes no Python step; and the search steps in Python wherever it does not apply (a trace, an n-gram ban, no
early stopping, several sentences, decoder head masks, an unfolded cross-attention, a model whose scores are NaN)."""

from __future__ import annotations

import math

import pytest
import torch

import explorer.fastpath.packed_decoding as packed_decoding
import explorer.fastpath.scripted_decoding as scripted_decoding
from explorer.decoding import search
from explorer.inference import scorer_for
from explorer.model import HeadMask
from tests.engine.test_model import make_model
from tests.fastpath.sessions import alone_and_together

pytestmark = pytest.mark.usefixtures("kernels")  # every test on MKL's kernels and on oneDNN's (conftest.py)

SOURCES = [[5, 6, 7, 3], [9, 8, 7, 6, 5, 4, 3], [11, 3]]
NEVER = -1  # an end-of-sentence id no step produces: the search runs to its limit


def _beam(model, source, max_len, beam, *, eos, alpha=0.6, n_best=None, mask=None, **options):
    config = model.config
    scorer = scorer_for(model, torch.tensor([source]), mask)
    (found,) = search.beam_search(scorer, 1, beam, config.bos_id, eos, max_len, alpha, n_best, **options)
    return found


def _python(monkeypatch, *args, **kwargs):
    """The same search stepping in Python: the one-call path turned away."""
    with monkeypatch.context() as patch:
        patch.setattr(search, "_beam_one", lambda *a: None)
        return _beam(*args, **kwargs)


def _common_token(model, source) -> int:
    """A token the search often produces: as end-of-sentence, hypotheses finish and EOS is pruned along the way."""
    found = _beam(model, source, 20, 4, eos=NEVER)
    tokens = [t for h in found.hypotheses for t in h.tokens]
    return max(set(tokens), key=tokens.count)


@pytest.mark.parametrize("beam", [1, 2, 4, 5])
@pytest.mark.parametrize("max_len", [1, 3, 20])
@pytest.mark.parametrize("source", SOURCES, ids=["short", "longer", "one token"])
@torch.inference_mode()
def test_the_scripted_beam_finds_the_python_search_s_n_best_to_the_bit(monkeypatch, steps, source, max_len, beam):
    model = make_model()
    for eos in (NEVER, _common_token(model, source)):
        expected = _python(monkeypatch, model, source, max_len, beam, eos=eos)
        before = len(steps)
        found = _beam(model, source, max_len, beam, eos=eos)
        assert len(steps) == before, "the scripted search made no Python step"
        assert found.hypotheses == expected.hypotheses  # tokens, log-probs, totals, scores, finished: all equal
        assert len(found.hypotheses) == beam


@torch.inference_mode()
def test_finished_and_cut_hypotheses_rank_as_in_the_python_search(monkeypatch):
    """A limit that cuts some hypotheses after others finished: finished ones first, each kind by score."""
    model = make_model()
    source = SOURCES[1]
    eos = _common_token(model, source)
    for max_len in range(2, 12):
        for alpha in (0.0, 0.6, 1.5):
            expected = _python(monkeypatch, model, source, max_len, 4, eos=eos, alpha=alpha, n_best=4)
            found = _beam(model, source, max_len, 4, eos=eos, alpha=alpha, n_best=4)
            assert found.hypotheses == expected.hypotheses, (max_len, alpha)


@torch.inference_mode()
def test_twenty_positions_grow_and_reorder_the_buffer_as_the_steps_do(monkeypatch):
    model = make_model()
    expected = _python(monkeypatch, model, SOURCES[0], 20, 4, eos=NEVER)
    found = _beam(model, SOURCES[0], 20, 4, eos=NEVER)
    assert all(len(h.tokens) == 20 and not h.finished for h in found.hypotheses)
    assert found.hypotheses == expected.hypotheses


FALLBACKS = {
    "a trace": dict(trace=True),
    "an n-gram ban": dict(no_repeat_ngram=2),
    "no early stopping": dict(early_stopping=False),
}


@pytest.mark.parametrize("case", list(FALLBACKS))
@torch.inference_mode()
def test_options_the_loop_does_not_make_step_in_python(monkeypatch, steps, case):
    model = make_model()
    options = FALLBACKS[case]
    expected = _python(monkeypatch, model, SOURCES[1], 12, 4, eos=NEVER, **options)
    before = len(steps)
    found = _beam(model, SOURCES[1], 12, 4, eos=NEVER, **options)
    assert len(steps) > before, "each step came from Python"
    assert found.hypotheses == expected.hypotheses


@pytest.mark.parametrize(
    "case",
    ["a decoder head masked", "unfolded cross-attention", "EXPLORER_SCRIPTED=0", "no TorchScript"],
)
@torch.inference_mode()
def test_where_the_loop_does_not_apply_the_search_steps_in_python(monkeypatch, steps, case):
    mask = None
    if case == "a decoder head masked":
        mask = HeadMask.from_names(["dec.1.2"], make_model().config)
    elif case == "unfolded cross-attention":
        monkeypatch.setattr(packed_decoding, "worth_folding", lambda *s: False)
    elif case == "EXPLORER_SCRIPTED=0":
        monkeypatch.setenv(scripted_decoding.VARIABLE, "0")
    else:
        monkeypatch.setattr(scripted_decoding, "scripted", lambda: None)
    model = make_model()
    found = _beam(model, SOURCES[1], 12, 4, eos=NEVER, mask=mask)
    assert len(steps) >= 12, "each step came from Python"
    assert found.hypotheses == _python(monkeypatch, model, SOURCES[1], 12, 4, eos=NEVER, mask=mask).hypotheses


@torch.inference_mode()
def test_several_sentences_step_in_python(monkeypatch, steps):
    model = make_model()
    config = model.config
    src = torch.tensor([SOURCES[0][:3], SOURCES[2] + [0]])
    search.beam_search(scorer_for(model, src), 2, 4, config.bos_id, NEVER, 6)
    assert len(steps) == 6


@torch.inference_mode()
def test_a_model_with_nan_scores_gets_what_the_python_search_gives(monkeypatch, steps):
    """The loop stops at a NaN score and the Python search decides (`translate` then says it found no translation:
    tests/cli/test_nonfinite_weights.py)."""
    model = make_model()
    with torch.no_grad():
        for parameter in model.decoder_layers[-1].parameters():
            parameter.fill_(math.nan)
    found = _beam(model, SOURCES[1], 12, 4, eos=NEVER)
    assert len(steps) >= 1, "the loop gave way to the Python steps"
    expected = _python(monkeypatch, model, SOURCES[1], 12, 4, eos=NEVER)
    assert repr(found.hypotheses) == repr(expected.hypotheses)  # NaN != NaN: compared as written


def test_concurrent_sessions_on_one_model_get_what_each_gets_alone():
    """One cached model serves every browser session: the loop keeps nothing on the decoder between calls."""
    model = make_model()
    sources = [[5 + i, 6, 7 + i % 3, 3] for i in range(8)]
    alone, together = alone_and_together(lambda s: _beam(model, s, 20, 4, eos=NEVER).hypotheses, sources)
    assert together == alone


@torch.inference_mode()
def test_an_encoder_only_head_mask_keeps_the_scripted_beam(monkeypatch, steps):
    """An encoder head's gate acts in `encode`; the decoder's steps, and so the one-call search, are unmasked."""
    model = make_model()
    mask = HeadMask.from_names(["enc.1.0"], model.config)
    expected = _python(monkeypatch, model, SOURCES[1], 12, 4, eos=NEVER, mask=mask)
    before = len(steps)
    found = _beam(model, SOURCES[1], 12, 4, eos=NEVER, mask=mask)
    assert len(steps) == before
    assert found.hypotheses == expected.hypotheses
    assert found.hypotheses != _beam(model, SOURCES[1], 12, 4, eos=NEVER).hypotheses, "the mask changed the memory"


@torch.inference_mode()
def test_the_shipped_model_takes_the_scripted_beam_with_the_python_search_s_outputs(monkeypatch, steps):
    import json
    from pathlib import Path

    from explorer.checkpoint import load_checkpoint

    folder = Path(__file__).resolve().parents[2] / "checkpoints" / "multi30k-en-de"
    loaded = load_checkpoint(folder, "cpu")
    model, config = loaded.model, loaded.config
    sentences = json.loads((folder / "examples.json").read_text(encoding="utf-8"))["en"][:8]
    for sentence in sentences:
        source = loaded.tokenizer.encode(sentence)[: config.max_len - 1] + [config.eos_id]
        limit = len(source) + 50
        expected = _python(monkeypatch, model, source, limit, 4, eos=config.eos_id)
        before = len(steps)
        found = _beam(model, source, limit, 4, eos=config.eos_id)
        assert len(steps) == before, sentence
        assert found.hypotheses == expected.hypotheses, sentence
        assert found.hypotheses[0].finished
