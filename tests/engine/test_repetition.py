"""Repeated n-grams in an output, and the mask that forbids them (explorer/decoding/repetition.py), on
hand-built cases."""

from __future__ import annotations

import math

import pytest
import torch

from explorer.decoding import Repeat, ban_repeated_ngrams, is_repetitive, loop_unit, output_loop, repeated_ngram


@pytest.mark.parametrize(
    "words, expected",
    [
        ("ein Mann ein Mann ein Mann", Repeat(0, 2, 3)),
        ("Ein Hund läuft auf der Straße auf der Straße auf der Straße auf der Straße .", Repeat(3, 3, 4)),
        ("zwei Hunde spielen im Schnee .", None),
        ("ein Mann ein Mann fährt", None),  # twice is not a loop
        ("sehr sehr sehr gut", None),  # a single word three times: n must be >= 2
        ("a a a a a a", Repeat(0, 2, 3)),  # ...but six times is also a 2-gram three times
        ("a b a b a c a b", None),  # broken before the third copy
        ("", None),
        ("x a b c a b c a b c", Repeat(1, 3, 3)),
    ],
)
def test_repeated_ngram_on_words(words: str, expected: Repeat | None) -> None:
    assert repeated_ngram(words.split()) == expected
    assert is_repetitive(words.split()) == (expected is not None)


def test_repeated_ngram_on_token_ids_and_other_thresholds() -> None:
    assert repeated_ngram([5, 7, 5, 7, 5, 7, 2]) == Repeat(0, 2, 3)
    assert repeated_ngram((9, 1, 2, 1, 2)) is None
    assert repeated_ngram((9, 1, 2, 1, 2), min_times=2) == Repeat(1, 2, 2)
    assert repeated_ngram([3, 3, 3], min_n=1) == Repeat(0, 1, 3)


@pytest.mark.parametrize(
    "words, unit",
    [
        ("Hund Hund Hund Hund Hund Hund Hund Hund .", Repeat(0, 1, 8)),  # found as "Hund Hund" x3 (n >= 2)
        ("ein Mann ein Mann ein Mann ein Mann", Repeat(0, 2, 4)),
        ("x a b a b a b a b a b a b", Repeat(1, 2, 6)),  # found as "a b" x6 already
        ("a b c a b c a b c a b", Repeat(0, 3, 3)),
    ],
)
def test_loop_unit_tells_the_loop_by_its_shortest_unit(words: str, unit: Repeat) -> None:
    tokens = words.split()
    found = repeated_ngram(tokens)
    assert found is not None and loop_unit(tokens, found) == unit


def test_output_loop_by_words_then_inside_a_word() -> None:
    pieces = ["▁ein", "▁Mann", "▁ein", "▁Mann", "▁ein", "▁Mann", "</s>"]
    assert output_loop("ein Mann ein Mann ein Mann", pieces) == ("ein Mann", 3)
    inside = ["▁Ein", "▁Maschine", "▁mit", "▁NA", "D", "A", "D", "A", "D", "A", "D", "A", "D"]
    assert output_loop("Ein Maschine mit NADADADADAD", inside) == ("DA", 4)
    assert output_loop("Ein Hund läuft .", ["▁Ein", "▁Hund", "▁läuft", ".", "</s>"]) is None
    # </s> is not part of the output: "x </s>" after "x x" is no loop.
    assert output_loop("ab ab", ["▁a", "b", "▁a", "b", "</s>"]) is None


def test_ban_repeated_ngrams_masks_each_row_by_its_own_history() -> None:
    log_probs = torch.zeros(3, 6)
    history = torch.tensor(
        [
            [2, 3, 4, 2],  # (2, 3) occurred: after 2, token 3 is banned
            [2, 3, 2, 5],  # last token 5 never came before: nothing banned
            [4, 1, 4, 2],  # (4, 1) and (4, 2) occurred... last is 2, (2, ?) never: nothing banned
        ]
    )
    masked = ban_repeated_ngrams(log_probs, history, 2)
    assert masked[0].tolist() == [0, 0, 0, -math.inf, 0, 0]
    assert masked[1].tolist() == [0.0] * 6 and masked[2].tolist() == [0.0] * 6
    assert log_probs.eq(0).all(), "the input is not changed"


def test_ban_repeated_ngrams_with_n_three_and_several_matches() -> None:
    log_probs = torch.zeros(1, 8)
    history = torch.tensor([[1, 2, 5, 1, 2, 6, 1, 2]])  # (1, 2) was followed by 5 and by 6
    masked = ban_repeated_ngrams(log_probs, history, 3)
    assert [i for i, v in enumerate(masked[0].tolist()) if v == -math.inf] == [5, 6]
    one = ban_repeated_ngrams(log_probs, history, 1)  # n = 1: no token twice
    assert [i for i, v in enumerate(one[0].tolist()) if v == -math.inf] == [1, 2, 5, 6]


def test_ban_repeated_ngrams_before_one_ngram_is_complete() -> None:
    log_probs = torch.randn(2, 5)
    assert ban_repeated_ngrams(log_probs, torch.tensor([[1, 1], [2, 3]]), 3) is log_probs
    assert ban_repeated_ngrams(log_probs, torch.zeros((2, 0), dtype=torch.long), 2) is log_probs
