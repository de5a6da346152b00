"""Sentences that state a computed fact are worded from the value they state (explorer/claims.py), in English
and in Korean; the shipped model's sentences match its values; stop 7's schedule shows its warm-up and samples
its peak; the tour's formulas say what they assume and fit their column."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from explorer import claims
from explorer.analysis.positional import embedding_norms
from explorer.checkpoint import load_checkpoint
from explorer.config import ModelConfig
from explorer.figures import tour_training
from explorer.inference import encode_sources, translate
from explorer.paper import TABLE3
from explorer.tour import exercises as ex
from explorer.tour import numbers
from explorer.tour.stops import BY_KEY
from explorer.tour.tables import trained_steps
from explorer.training.schedule import noam_learning_rate

REPO = Path(__file__).resolve().parents[2]
MULTI30K_MODEL = REPO / "checkpoints" / "multi30k-en-de"
SENTENCE = "a small child sees the red dog ."
HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.fixture(scope="module")
def shipped(one_torch_thread):
    ck = load_checkpoint(MULTI30K_MODEL)
    return ck, translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True)[0]


def distinct_in_both_languages(sentences: list[str], korean: list[str]) -> None:
    assert len(set(sentences)) == len(sentences), sentences
    assert len(set(korean)) == len(korean), korean
    assert all(HANGUL.search(k) for k in korean), korean


# --- the wording changes across each threshold -----------------------------------------------------------


def test_cosine_words_change_across_their_thresholds():
    values = (-0.9, -0.43, 0.0, 0.3, 0.7)
    distinct_in_both_languages(
        [claims.token_and_position_cosine(c) for c in values],
        [claims.token_and_position_cosine(c, "ko") for c in values],
    )
    # −0.43 is 115°: not "nearly orthogonal" (the sentence the Positional page used to print for any value).
    at_115 = claims.token_and_position_cosine(-0.43)
    assert "115°" in at_115 and "orthogonal" in at_115 and "nearly orthogonal" not in at_115
    assert "nearly orthogonal" in claims.token_and_position_cosine(0.05)
    assert claims.angle_degrees(-0.43) == pytest.approx(115.5, abs=0.1)


def test_embedding_length_words_change_across_their_thresholds():
    cases = ((20.0, 19.0), (20.3, 11.3), (5.0, 11.3))
    distinct_in_both_languages(
        [claims.embedding_scale(16, a, b) for a, b in cases],
        [claims.embedding_scale(16, a, b, "ko") for a, b in cases],
    )
    assert "about as long as" in claims.embedding_scale(16, 20.0, 19.0)
    assert "1.8 times as long" in claims.embedding_scale(16, 20.3, 11.3)
    assert "shorter" in claims.embedding_scale(16, 5.0, 11.3)


def test_attention_cost_words_follow_n_against_d():
    cases = ((8, 256), (512, 256), (256, 256))
    distinct_in_both_languages(
        [claims.attention_cost(n, d) for n, d in cases], [claims.attention_cost(n, d, "ko") for n, d in cases]
    )
    assert "32 times cheaper" in claims.attention_cost(8, 256)
    assert "2.0 times more" in claims.attention_cost(512, 256)


def test_table3_sentences_are_read_from_the_table():
    depth = claims.depth_in_table3()
    n8 = next(r for r in TABLE3 if r.change == "N=8").bleu
    base = next(r for r in TABLE3 if r.group == "base").bleu
    assert f"N = 8: {n8}" in depth and f"N = 6: {base}" in depth
    assert "Too few layers cost most" in depth and "Depth matters most" not in depth
    assert n8 < base and "scored lower" in depth
    assert "0.9 BLEU" in claims.heads_in_table3() and HANGUL.search(claims.heads_in_table3("ko"))
    explanation = ex.worst_variation()
    assert explanation.fields["depth"] == depth


def test_model_sizes_are_shown_beside_the_papers():
    config = ModelConfig(vocab_size=100, d_model=64, n_heads=4, d_ff=128, n_encoder_layers=2, n_decoder_layers=2)
    sentence = claims.model_beside_paper(config)
    assert "N = 2" in sentence and "d_model = 64" in sentence and "h = 4" in sentence
    assert "N = 6" in sentence and "d_model = 512" in sentence and "h = 8" in sentence
    assert HANGUL.search(claims.model_beside_paper(config, "ko"))


# --- the shipped model's sentences match its values ------------------------------------------------------


def test_shipped_models_positional_sentence_matches_its_cosine(shipped):
    ck, _ = shipped
    ids, _ = encode_sources(ck.tokenizer, [SENTENCE], ck.config.max_len, ck.config.eos_id)
    cosine = embedding_norms(ck.model, ids[0], ck.tokenizer.pieces(ids[0])).mean_cosine
    sentence = claims.token_and_position_cosine(cosine)
    assert f"{claims.angle_degrees(cosine):.0f}°" in sentence and f"{cosine:+.2f}" in sentence
    assert ("nearly orthogonal" in sentence) == (abs(cosine) < claims.ORTHOGONAL_COSINE)


def test_shipped_models_embedding_sentence_matches_its_lengths(shipped):
    ck, tr = shipped
    activity = numbers.feed_forward_activity(ck.model, tr)
    scaled, positional = float(np.median(activity.scaled_norm)), float(np.median(activity.positional_norm))
    sentence = claims.embedding_scale(ck.config.d_model**0.5, scaled, positional)
    ratio = scaled / positional
    assert f"{scaled:.1f}" in sentence and f"{positional:.1f}" in sentence
    assert ("about as long as" in sentence) == (1 / claims.SAME_LENGTH <= ratio <= claims.SAME_LENGTH)
    if ratio > claims.SAME_LENGTH:
        assert f"{ratio:.1f} times as long" in sentence


def test_label_smoothing_is_the_checkpoints(shipped):
    ck, tr = shipped
    recorded = numbers.label_smoothing_of(ck.metadata)
    assert recorded == ck.metadata["training"]["train_config"]["label_smoothing"]
    assert numbers.label_smoothing_of({}) is None
    other = ex.smoothed_confidence(ck.model, ck.tokenizer, tr, epsilon=0.25)
    assert other.fields["epsilon"] == "0.25"
    assert float(other.fields["target"]) == pytest.approx(0.75 + 0.25 / ck.config.vocab_size, abs=5e-4)
    assert "without label smoothing" in ex.smoothed_confidence(ck.model, ck.tokenizer, tr, epsilon=0.0).explanation
    figure = tour_training.smoothing_figure(
        ["a", "b"], [0.6, 0.2], "a", smoothed_target=0.8, smoothed_other=0.1, epsilon=0.2
    )
    assert "0.2" in figure.data[1].name and "0.1" not in figure.data[1].name


# --- stop 7's schedule ---------------------------------------------------------------------------------------


def test_schedule_shows_the_warm_up_and_samples_its_peak(shipped):
    ck, _ = shipped
    trained = trained_steps(ck.metadata)
    schedule = numbers.schedule_for(ck.config, ck.metadata, trained)
    warmup = schedule.warmup_steps
    assert warmup == ck.metadata["training"]["train_config"]["warmup_steps"]
    assert warmup in schedule.steps, "the peak is a sampled step"
    assert schedule.rates.max() == pytest.approx(schedule.peak, rel=1e-12)
    assert schedule.peak == noam_learning_rate(warmup, ck.config.d_model, warmup, schedule.scale)
    # The axis spans a few warm-ups (or the trained steps), not the planned 200,000 steps: the warm-up is
    # drawn by many points, not as a spike at step 0.
    assert schedule.steps[-1] == max(numbers.SCHEDULE_WARMUPS * warmup, trained or 0) < 200_000
    assert (schedule.steps <= warmup).sum() >= 20


def test_schedule_title_says_what_it_plots():
    steps = np.arange(1, 100)
    rates = np.ones(99)
    scaled = tour_training.schedule_figure(steps, rates, warmup_steps=10, d_model=256, scale=0.8)
    assert scaled.layout.title.text.startswith("0.8 \u00d7 Eq. 3")
    plain = tour_training.schedule_figure(steps, rates, warmup_steps=10, d_model=256)
    assert plain.layout.title.text.startswith("Eq. 3")


# --- the stops' texts and formulas --------------------------------------------------------------------------


def test_variance_formula_states_its_assumption():
    stop = BY_KEY["scaled_dot_product"]
    variance = next(f for f in stop.formulas if "Var" in f)
    assert r"\mathrm{E}[q_i] = \mathrm{E}[k_i] = 0" in variance and r"\mathrm{Var}[q_i]" in variance
    assert "independent" in stop.text and "variance 1" in stop.text


def test_no_stop_says_where_the_figure_is():
    # The figure is on the right beside the text, or above it where the columns stack: never "below".
    assert not any(re.search(r"\b(below|above)\b", s.text, re.IGNORECASE) for s in BY_KEY.values())


def test_long_formulas_are_broken_and_transposes_keep_their_bar():
    for stop in BY_KEY.values():
        for formula in stop.formulas:
            assert r"^\top" not in formula, f"stop {stop.number}: \\top loses its bar in KaTeX at body size"
            for line in re.split(r"\\\\", formula):
                visible = re.sub(r"\\[a-zA-Z]+|[{}&\s!]", "", line)
                assert len(visible) <= 40, f"stop {stop.number}: a formula line of {len(visible)} symbols: {line}"


def test_exercise_explanations_match_their_values(shipped, words_checkpoint):
    words = load_checkpoint(words_checkpoint)
    words_translation = translate(words.model, words.tokenizer, [SENTENCE], with_attention=True)[0]
    for ck, tr in (shipped, (words, words_translation)):
        similarity = ex.positional_similarity(ck.model, tr)
        falls = float(similarity.answer) < float(similarity.fields["neighbour"])
        assert ("similarity falls with the distance" in similarity.explanation) == falls
        crossover = ex.crossover(ck.model, tr)
        n, d = len(tr.source_ids), ck.config.d_model
        assert crossover.fields["cost"] == claims.attention_cost(n, d)
        assert ("cheaper" in crossover.fields["cost"]) == (n < d)
