"""The tour's exercises: each answer is computed from the model (change the model, the answer changes where
it should), and on the page a guess is recorded before the answer is revealed."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.config import count_parameters
from explorer.inference import translate
from explorer.model.positional import sinusoidal_encoding
from explorer.paper import TABLE3
from explorer.tour import exercises as ex
from explorer.tour.numbers import BeamRow, beam_grid

REPO = Path(__file__).resolve().parents[2]
MULTI30K_MODEL = REPO / "checkpoints" / "multi30k-en-de"
SENTENCE = "a small child sees the red dog ."


@pytest.fixture(scope="module")
def words(words_checkpoint, one_torch_thread):
    ck = load_checkpoint(words_checkpoint)
    return ck, translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True)[0]


@pytest.fixture(scope="module")
def shipped(one_torch_thread):
    ck = load_checkpoint(MULTI30K_MODEL)
    return ck, translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True)[0]


def changed_model(model, edit):
    """A deep copy of `model` with `edit(copy)` applied under no_grad (the shared model stays untouched)."""
    other = copy.deepcopy(model)
    with torch.no_grad():
        edit(other)
    return other


# --- engine: answers come from the model ---------------------------------------------------------------------


def test_sqrt_dk_answer_is_the_unscaled_softmax_of_this_model(words):
    ck, tr = words
    exercise = ex.softmax_without_scaling(ck.model, tr)
    assert exercise.kind == ex.NUMBER and 0.0 <= exercise.answer <= 1.0
    # Removing ÷√d_k only sharpens a softmax: the largest weight cannot fall.
    assert exercise.answer >= float(exercise.fields["scaled"]) - 0.005
    # Larger queries make the unscaled scores larger still: the answer follows the model's weights.
    sharper = changed_model(
        ck.model,
        lambda m: (
            m.encoder_layers[0].self_attention.w_q.weight.mul_(3.0),
            m.encoder_layers[0].self_attention.w_q.bias.mul_(3.0),
        ),
    )
    assert ex.softmax_without_scaling(sharper, tr).answer != exercise.answer


def test_cross_head_answer_is_where_that_head_looks(words, reverse_checkpoint):
    ck, tr = words
    exercise = ex.cross_attention_target(tr)
    layer, head = exercise.fields["layer"] - 1, exercise.fields["head"] - 1
    row = tr.target_output_pieces.index(exercise.fields["word"])
    weights = tr.attention.cross[layer, head, row]
    assert exercise.answer == tr.source_pieces[int(np.argmax(weights))]
    assert exercise.answer in exercise.options and set(exercise.options) == set(tr.source_pieces)
    other = load_checkpoint(reverse_checkpoint)
    reversed_ = translate(other.model, other.tokenizer, ["a b c d e f g"], with_attention=True)[0]
    mine = ex.cross_attention_target(reversed_)
    assert mine.options != exercise.options and mine.answer in reversed_.source_pieces


def test_relu_zeros_follow_the_ffn_bias(words):
    ck, tr = words
    exercise = ex.relu_zeros(ck.model, tr)
    assert 0 < exercise.answer < 100
    assert (
        ex.relu_zeros(changed_model(ck.model, lambda m: m.encoder_layers[0].feed_forward.w_1.bias.sub_(1e4)), tr).answer
        == 100
    )
    assert (
        ex.relu_zeros(changed_model(ck.model, lambda m: m.encoder_layers[0].feed_forward.w_1.bias.add_(1e4)), tr).answer
        == 0
    )


def test_positional_cosine_is_this_models_encoding(words, shipped):
    for ck, tr in (words, shipped):
        exercise = ex.positional_similarity(ck.model, tr)
        n = len(tr.source_ids)
        table = sinusoidal_encoding(n, ck.config.d_model).double().numpy()
        expected = table[0] @ table[n - 1] / (np.linalg.norm(table[0]) * np.linalg.norm(table[n - 1]))
        assert exercise.answer == pytest.approx(round(float(expected), 2))
    # Learned positions (Table 3, row E) are the model's own table, not the formula.
    ck, tr = words
    learned = changed_model(ck.model, lambda m: m.sinusoids.mul_(-1.0).add_(0.5))
    assert ex.positional_similarity(learned, tr).answer != ex.positional_similarity(ck.model, tr).answer


def test_crossover_is_this_models_d(words, shipped):
    assert ex.crossover(words[0].model, words[1]).answer == words[0].config.d_model == 32
    assert ex.crossover(shipped[0].model, shipped[1]).answer == 256
    exercise = ex.crossover(shipped[0].model, shipped[1])
    assert exercise.is_correct(230) and not exercise.is_correct(100)


def test_confidence_is_the_models_probability(words, shipped):
    for ck, tr in (words, shipped):
        exercise = ex.smoothed_confidence(ck.model, ck.tokenizer, tr)
        position = (len(tr.output_ids) - 1) // 2
        source = torch.tensor([tr.source_ids])
        target = torch.tensor([[ck.config.bos_id] + tr.output_ids[:-1]])
        with torch.no_grad():
            probs = torch.softmax(ck.model(source, target).logits[0, position], -1)
        assert exercise.answer == pytest.approx(round(float(probs[tr.output_ids[position]]), 2))
        assert float(exercise.fields["target"]) == pytest.approx(0.9 + 0.1 / ck.config.vocab_size, abs=1e-3)
    assert (
        ex.smoothed_confidence(words[0].model, words[0].tokenizer, words[1]).answer
        != ex.smoothed_confidence(shipped[0].model, shipped[0].tokenizer, shipped[1]).answer
    )


def test_beam_answer_compares_real_decodes(words):
    ck, _ = words
    rows = beam_grid(ck.model, ck.tokenizer, SENTENCE, beams=(1, 4), alphas=(0.6,))
    greedy = translate(ck.model, ck.tokenizer, [SENTENCE])[0].output
    wide = translate(ck.model, ck.tokenizer, [SENTENCE], beam_size=4, alpha=0.6)[0].output
    assert ex.beam_changes(rows).answer == ("yes" if greedy != wide else "no")
    same = [BeamRow(1, 0.6, "x", 2, -1.0, -1.0, 1.0), BeamRow(4, 0.6, "x", 2, -1.0, -1.0, 1.0)]
    differ = [same[0], BeamRow(4, 0.6, "y", 3, -0.5, -0.4, 1.2)]
    assert ex.beam_changes(same).answer == "no" and ex.beam_changes(differ).answer == "yes"


def test_beam_question_from_its_two_searches_equals_the_one_from_the_whole_grid(shipped):
    """The tour builds stop 8's question from greedy's and 4 beams' searches alone (its first visit runs no
    others): the same question, answer and numbers as from the whole grid the stop draws."""
    ck, _ = shipped
    sentence = "Three women smiling and sitting down."
    two = beam_grid(ck.model, ck.tokenizer, sentence, (1, ex.BEAM_CHANGES_BEAM), (ex.BEAM_CHANGES_ALPHA,))
    assert len(two) == 2
    assert ex.beam_changes(two) == ex.beam_changes(beam_grid(ck.model, ck.tokenizer, sentence))


def test_table3_worst_row_is_the_lowest_bleu_of_the_paper():
    exercise = ex.worst_variation()
    bleu = {r.label: r.bleu for r in TABLE3}
    assert exercise.answer == min(exercise.options, key=bleu.get) == "(C) N=2"


def test_embedding_share_follows_vocabulary_and_width(words, shipped):
    for ck, _ in (words, shipped):
        config = ck.config
        expected = round(100 * config.vocab_size * config.d_model / count_parameters(config))
        assert ex.embedding_parameters(ck.model).answer == expected
    assert ex.embedding_parameters(shipped[0].model).answer == 32  # 10,000 × 256 of 8,089,600
    assert ex.embedding_parameters(words[0].model).answer != 32


def test_exercise_checking_and_parsing_a_guess():
    number = ex.Exercise("n", 2, "q", ex.NUMBER, 0.5, "e", tolerance=0.1)
    assert number.is_correct(0.55) and not number.is_correct(0.7)
    assert number.parse_guess("0.4") == 0.4 and number.parse_guess("7") is None and number.parse_guess("x") is None
    choice = ex.Exercise("c", 3, "q", ex.CHOICE, "▁dog", "e", options=("▁a", "▁dog"))
    assert choice.parse_guess("▁dog") == "▁dog" and choice.parse_guess("cat") is None
    with pytest.raises(AssertionError):
        ex.Exercise("bad", 3, "q", ex.CHOICE, "z", "e", options=("a",))
    assert ex.score([number, choice], {"n": 0.5, "c": "▁a"}) == (1, 2)
    assert math.isclose(ex.score([number], {})[1], 0)


# --- the page: ask first, reveal after -------------------------------------------------------------------------

PAGE = "pages/tour.py"
EXERCISE_STOPS = {
    "sqrt_dk": 2,
    "cross_head": 3,
    "relu_zeros": 4,
    "pe_cosine": 5,
    "crossover": 6,
    "confidence": 7,
    "beam_changes": 8,
    "table3_worst": 9,
    "embedding_share": 9,
}


def revealed(at) -> list[str]:
    return [m.value for m in list(at.success) + list(at.warning) if "the model says" in m.value]


def engine_exercise(checkpoint_dir: Path, key: str) -> ex.Exercise:
    ck = load_checkpoint(checkpoint_dir)
    tr = translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True)[0]
    all_exercises = ex.build_exercises(ck.model, ck.tokenizer, tr, beam_grid(ck.model, ck.tokenizer, SENTENCE))
    assert [e.key for e in all_exercises] == list(EXERCISE_STOPS), "one page test per exercise"
    return next(e for e in all_exercises if e.key == key)


@pytest.mark.slow
@pytest.mark.parametrize("key", list(EXERCISE_STOPS))
def test_guess_is_recorded_before_the_answer_is_revealed(key, words_checkpoint, checkpoint_root):
    from tests.apptest_helpers import open_page, query_value

    expected = engine_exercise(words_checkpoint, key)
    at = open_page(PAGE, model="words-fixture", stop=str(EXERCISE_STOPS[key]), tour_sentence=SENTENCE)
    assert not revealed(at), "the answer must not show before a guess"
    assert not any(expected.explanation[:20] in m.value for m in at.markdown)
    guess = expected.options[0] if expected.kind == ex.CHOICE else expected.low
    if expected.kind == ex.CHOICE:
        at.button_group(key=f"guess_{key}").set_value(guess).run()
    else:
        at.slider(key=f"guess_{key}").set_value(guess).run()
    assert not revealed(at), "choosing is not committing: nothing is revealed before Check"
    at.button(key=f"check_{key}").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["tour_guesses"][key] == guess
    assert f"{key}:" in (query_value(at, "ex") or "")
    [message] = revealed(at)
    answer = expected.answer if expected.kind == ex.CHOICE else f"{float(expected.answer):g}"
    shown = str(answer).replace("\u2581", "") or str(answer)
    assert f"the model says {shown}" in message.replace("\\", "")
    assert message.startswith("Right" if expected.is_correct(guess) else "Not quite")
