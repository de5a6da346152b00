"""One sentence's decoding in TorchScript (`explorer/fastpath/scripted_decoding.py`), on MKL's kernels and on
oneDNN's: the greedy search in one call finds what the Python loop finds, to the bit, and leaves the scorer's
cache as the steps would; a step of one sentence's rows (a beam) gives the Python step's log-probabilities to
the bit; and both give way to the Python steps wherever they do not apply: a head mask on decoder heads, pre-LN
models, an unfolded cross-attention, int8 feed-forward blocks, several sentences at once, a length limit beyond
the positional table, `EXPLORER_SCRIPTED=0`, a torch without TorchScript."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import explorer.fastpath.packed_decoding as packed_decoding
import explorer.fastpath.scripted_decoding as scripted_decoding
from explorer.decoding import search
from explorer.fastpath.packed_decoding import packed_decoder
from explorer.inference import scorer_for
from explorer.model import HeadMask
from explorer.quantize import quantize_int8
from tests.engine.test_model import make_model
from tests.fastpath.sessions import alone_and_together
from tests.fastpath.test_folded_cross import SCHEDULES, SRC, TGT

pytestmark = pytest.mark.usefixtures("kernels")  # every test on MKL's kernels and on oneDNN's (conftest.py)

SOURCES = [[5, 6, 7, 3], [9, 8, 7, 6, 5, 4, 3], [11, 3]]
CHECKPOINT = Path(__file__).resolve().parents[2] / "checkpoints" / "multi30k-en-de"


NEVER = -1  # an end-of-sentence id no step produces: the search runs to its limit


def _greedy(model, source, max_len, head_mask=None, eos=None):
    config = model.config
    scorer = scorer_for(model, torch.tensor([source]), head_mask)
    (found,) = search.greedy_search(scorer, 1, config.bos_id, config.eos_id if eos is None else eos, max_len)
    return found, scorer


def _python(monkeypatch, model, source, max_len, head_mask=None, eos=None):
    with monkeypatch.context() as patch:
        patch.setenv(scripted_decoding.VARIABLE, "0")
        return _greedy(model, source, max_len, head_mask, eos)


@pytest.mark.parametrize("max_len", [1, 3, 30])
@pytest.mark.parametrize("source", SOURCES, ids=["short", "longer", "one token"])
@torch.inference_mode()
def test_the_scripted_loop_finds_the_python_loop_s_tokens_and_log_probs_to_the_bit(monkeypatch, steps, source, max_len):
    model = make_model()
    expected, _ = _python(monkeypatch, model, source, max_len)
    python_steps = len(steps)
    assert python_steps == len(expected.tokens)
    found, scorer = _greedy(model, source, max_len)
    assert len(steps) == python_steps, "the scripted loop made no Python step"
    assert found == expected  # tokens, per-token log-probabilities, sum, score, finished: all equal
    assert isinstance(found.token_log_probs[0], float)


@torch.inference_mode()
def test_the_cache_after_the_scripted_loop_is_the_one_the_steps_leave(monkeypatch):
    model = make_model()
    source = SOURCES[1]
    expected, stepped = _python(monkeypatch, model, source, 30)
    found, scripted = _greedy(model, source, 30)
    assert found == expected
    a, b = stepped.cache, scripted.cache
    assert a.position == b.position == len(found.tokens)
    assert a.self_kv is not None and b.self_kv is not None
    assert a.self_kv.shape == b.self_kv.shape
    assert torch.equal(a.self_kv[: a.position], b.self_kv[: b.position])
    assert b.folded is not None and b.group_size == 1
    # The search can go on from it: one more step from either cache gives the same log-probabilities.
    last = torch.tensor([found.tokens[-1]])
    assert torch.equal(stepped.step(last, a.position), scripted.step(last, b.position))


@torch.inference_mode()
def test_twenty_positions_grow_the_buffer_as_the_steps_do(monkeypatch):
    """A search longer than the first buffer (16 positions) doubles it inside the loop."""
    model = make_model()
    expected, stepped = _python(monkeypatch, model, SOURCES[1], 20, eos=NEVER)
    found, scripted = _greedy(model, SOURCES[1], 20, eos=NEVER)
    assert len(found.tokens) == 20 and not found.finished
    assert found == expected
    assert scripted.cache.self_kv is not None and scripted.cache.self_kv.shape[0] == 32
    assert torch.equal(stepped.cache.self_kv[:20], scripted.cache.self_kv[:20])


def _int8(monkeypatch):
    return quantize_int8(make_model()), None


FALLBACKS = {
    "a decoder head masked": lambda mp: (make_model(), "dec.1.2"),
    "a cross head masked": lambda mp: (make_model(), "cross.0.0"),
    "pre-LN": lambda mp: (make_model(norm_position="pre"), None),
    "int8 feed-forward": _int8,
    "unfolded cross-attention": lambda mp: (
        mp.setattr(packed_decoding, "worth_folding", lambda *s: False),
        (make_model(), None),
    )[1],
    "EXPLORER_SCRIPTED=0": lambda mp: (mp.setenv(scripted_decoding.VARIABLE, "0"), (make_model(), None))[1],
    "no TorchScript": lambda mp: (mp.setattr(scripted_decoding, "scripted", lambda: None), (make_model(), None))[1],
}


@pytest.mark.parametrize("case", list(FALLBACKS))
@torch.inference_mode()
def test_where_the_loop_does_not_apply_the_search_steps_in_python_with_the_same_outputs(monkeypatch, steps, case):
    model, head = FALLBACKS[case](monkeypatch)
    mask = None if head is None else HeadMask.from_names([head], model.config)
    found, _ = _greedy(model, SOURCES[1], 12, mask)
    assert len(steps) == len(found.tokens) >= 1, "each token came from a Python step"
    with monkeypatch.context() as patch:
        patch.setattr(search, "_greedy_one", search._greedy_one)
        (rows,) = search._greedy_rows(
            scorer_for(model, torch.tensor([SOURCES[1]]), mask),
            1,
            model.config.bos_id,
            model.config.eos_id,
            12,
            search._Score(0.6, "gnmt"),
            None,
        )
    assert found == rows


@torch.inference_mode()
def test_an_encoder_only_head_mask_keeps_the_scripted_loop(monkeypatch, steps):
    """An encoder head's gate acts in `encode`; the decoder's steps are the unmasked ones."""
    model = make_model()
    mask = HeadMask.from_names(["enc.1.0"], model.config)
    expected, _ = _python(monkeypatch, model, SOURCES[1], 30, mask)
    before = len(steps)
    found, _ = _greedy(model, SOURCES[1], 30, mask)
    assert len(steps) == before
    assert found == expected
    assert found != _greedy(model, SOURCES[1], 30)[0], "the mask changed the memory, so the translation"


@torch.inference_mode()
def test_a_limit_beyond_the_positional_table_raises_the_model_s_own_message(monkeypatch):
    model = make_model()
    limit = model.config.max_len + 5
    with pytest.raises(ValueError) as scripted:
        _greedy(model, SOURCES[0], limit, eos=NEVER)
    with pytest.raises(ValueError) as python:
        _python(monkeypatch, model, SOURCES[0], limit, eos=NEVER)
    assert str(scripted.value) == str(python.value)
    assert str(model.config.max_len) in str(scripted.value)


@torch.inference_mode()
def test_the_graph_optimizer_setting_is_left_as_it_was():
    model = make_model()
    before = torch._C._get_graph_executor_optimize()
    _greedy(model, SOURCES[0], 10)
    assert torch._C._get_graph_executor_optimize() == before


def test_concurrent_sessions_on_one_model_get_what_each_gets_alone(monkeypatch):
    """One cached model serves every browser session: the loop keeps nothing on the decoder between calls."""
    model = make_model()
    sources = [[5 + i, 6, 7 + i % 3, 3] for i in range(8)]
    alone, together = alone_and_together(lambda s: _greedy(model, s, 30)[0], sources, repeats=5)
    assert together == alone


@torch.inference_mode()
def test_the_shipped_model_takes_the_scripted_loop_with_the_python_loop_s_outputs(monkeypatch, steps):
    from explorer.checkpoint import load_checkpoint

    loaded = load_checkpoint(CHECKPOINT, "cpu")
    model, config = loaded.model, loaded.config
    assert packed_decoder(model).scripted_weights is not None
    sentences = json.loads((CHECKPOINT / "examples.json").read_text(encoding="utf-8"))["en"][:12]
    for sentence in sentences:
        source = loaded.tokenizer.encode(sentence)[: config.max_len - 1] + [config.eos_id]
        expected, _ = _python(monkeypatch, model, source, len(source) + 50)
        before = len(steps)
        found, _ = _greedy(model, source, len(source) + 50)
        assert len(steps) == before
        assert found == expected, sentence
        assert found.finished


@pytest.fixture
def scripted_steps(monkeypatch):
    """How many steps `scripted_decoding.step` made (not None)."""
    made: list[int] = []
    real = scripted_decoding.step

    def counted(*args, **kwargs):
        found = real(*args, **kwargs)
        made.append(found is not None)
        return found

    monkeypatch.setattr(scripted_decoding, "step", counted)
    return made


@pytest.mark.parametrize("rows", [1, 2, 4, 12, 13, 16])  # 2-12: W_2 read transposed, as MklFeedForward does
@torch.inference_mode()
def test_a_scripted_step_of_one_sentence_s_rows_gives_the_python_step_s_log_probs_to_the_bit(
    monkeypatch, scripted_steps, rows
):
    model = make_model()
    decoder = packed_decoder(model)
    encoded = model.encode(torch.tensor([SOURCES[1]]))
    results = {}
    for way in ("0", "1"):
        monkeypatch.setenv(scripted_decoding.VARIABLE, way)
        cache = decoder.start(encoded)
        tokens = torch.tensor([model.config.bos_id])
        log_probs, cache = decoder.step(tokens, cache)
        cache = cache.select(torch.zeros(rows, dtype=torch.long))  # one sentence's beam of `rows` rows
        found = []
        for t in range(20):  # past the first buffer of 16 positions
            tokens = torch.arange(rows) * 3 % (model.config.vocab_size - 20) + t
            log_probs, cache = decoder.step(tokens, cache)
            found.append(log_probs)
        results[way] = (found, cache)
    assert sum(scripted_steps) == 21, "every step of the second way was scripted"
    for t, (python, scripted) in enumerate(zip(results["0"][0], results["1"][0], strict=True)):
        assert torch.equal(python, scripted), f"step {t}"
    python_cache, scripted_cache = results["0"][1], results["1"][1]
    assert python_cache.position == scripted_cache.position == 21
    assert torch.equal(python_cache.self_kv[:21], scripted_cache.self_kv[:21])


@torch.inference_mode()
def test_beam_4_on_one_sentence_takes_scripted_steps_and_finds_the_python_steps_hypotheses(monkeypatch, scripted_steps):
    model = make_model()
    config = model.config

    def beam():
        scorer = scorer_for(model, torch.tensor([SOURCES[1]]))
        return search.beam_search(scorer, 1, 4, config.bos_id, config.eos_id, 30, trace=True)

    with monkeypatch.context() as patch:
        patch.setenv(scripted_decoding.VARIABLE, "0")
        expected = beam()
    assert scripted_steps and not any(scripted_steps)
    before = len(scripted_steps)
    found = beam()
    assert len(scripted_steps) > before and all(scripted_steps[before:])
    assert found == expected  # hypotheses, scores and the traced tree


@pytest.mark.parametrize("schedule", ["rows", "beams", "one sentence"])
@pytest.mark.parametrize("fold", [True, False], ids=["folded", "unfolded"])
@torch.inference_mode()
def test_scripted_steps_of_several_sentences_give_the_python_step_s_log_probs_to_the_bit(
    monkeypatch, scripted_steps, schedule, fold
):
    """Batches and beams: the cross-attention folded per sentence (batched operands) or not (the memory's keys
    and values, a padded source), through the beam's reorderings (test_perf_folded_cross's schedules)."""
    monkeypatch.setattr(packed_decoding, "worth_folding", lambda *sizes: fold)
    model = make_model()
    decoder = packed_decoder(model)
    sentences = 1 if schedule == "one sentence" else len(SRC)
    encoded = model.encode(SRC[:sentences])
    results = {}
    for way in ("0", "1"):
        monkeypatch.setenv(scripted_decoding.VARIABLE, way)
        cache = decoder.start(encoded)
        tokens = TGT[:sentences, 0]
        found = []
        for t, keep in enumerate([*SCHEDULES[schedule], None]):
            log_probs, cache = decoder.step(tokens, cache)
            found.append(log_probs.clone())
            if keep is None:
                break
            rows = torch.tensor(keep)
            cache = cache.select(rows)
            tokens = TGT.flatten()[(rows + t + 1) % TGT.numel()]
        results[way] = found
    steps = len(SCHEDULES[schedule]) + 1
    assert scripted_steps == [False] * steps + [True] * steps
    for t, (python, scripted) in enumerate(zip(results["0"], results["1"], strict=True)):
        assert torch.equal(python, scripted), f"step {t}"


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("beam", [1, 4])
@torch.inference_mode()
def test_searches_over_batches_find_the_python_steps_hypotheses(monkeypatch, scripted_steps, batch, beam):
    model = make_model()
    config = model.config
    src = torch.tensor([[5, 6, 7, 3, 0, 0], [9, 8, 7, 6, 5, 3], [11, 3, 0, 0, 0, 0]][:batch])

    def run():
        scorer = scorer_for(model, src)
        if beam == 1:
            return search.greedy_search(scorer, batch, config.bos_id, config.eos_id, 25)
        return search.beam_search(scorer, batch, beam, config.bos_id, config.eos_id, 25, trace=True)

    with monkeypatch.context() as patch:
        patch.setenv(scripted_decoding.VARIABLE, "0")
        expected = run()
    assert expected == run()


@torch.inference_mode()
def test_a_model_it_does_not_apply_to_never_compiles_the_functions(monkeypatch):
    """A pre-LN model (or a GPU) steps in Python without paying TorchScript's compilation."""
    asked: list[int] = []
    monkeypatch.setattr(scripted_decoding, "scripted", lambda: asked.append(1))
    model = make_model(norm_position="pre")
    _greedy(model, SOURCES[1], 12)
    scorer = scorer_for(model, torch.tensor([SOURCES[1], SOURCES[1]]))
    search.beam_search(scorer, 2, 2, model.config.bos_id, model.config.eos_id, 8)
    assert asked == []
