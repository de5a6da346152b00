"""Alignment error rate on hand-made alignments, cross-attention as links, and the IBM Model 1 reference aligner."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.explain.alignment import (
    aer,
    aer_counts,
    format_reference,
    head_links,
    parse_reference,
    score_heads,
    word_cross,
)
from explorer.explain.head_alignment import MULTI30K_TEST2016, read_reference
from explorer.explain.ibm1 import symmetric_links, words


def test_aer_on_a_hand_made_alignment():
    sure = frozenset({(0, 0), (1, 1)})
    possible = sure | {(2, 1)}
    assert aer(sure, sure) == 0.0
    # A = {(0,0), (2,1), (2,2)}: |A∩S| = 1, |A∩P| = 2, |A| = 3, |S| = 2 -> 1 − 3/5.
    hypothesis = frozenset({(0, 0), (2, 1), (2, 2)})
    assert aer(hypothesis, sure, possible) == pytest.approx(0.4)
    assert aer(frozenset(), sure) == 1.0
    # Over a corpus the counts add before dividing: (1 + 2) / (3 + 2) and (2 + 2) / (2 + 2) -> 1 − 7/9.
    total = aer_counts(hypothesis, sure, possible) + aer_counts(sure, sure)
    assert total.aer == pytest.approx(1 - 7 / 9)


def test_reference_lines_round_trip():
    sure, possible = parse_reference("0-0 1?2 2-1")
    assert sure == {(0, 0), (2, 1)} and possible == {(0, 0), (1, 2), (2, 1)}
    assert format_reference(sure, possible) == "0-0 1?2 2-1"


def test_a_head_links_each_target_word_to_its_strongest_source_word_and_shifts():
    source = ["▁a", "▁dog", "</s>"]
    target = ["▁ein", "▁Hund", "</s>"]
    cross = np.array([[[[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]]])  # (1, 1, tgt, src)
    words = word_cross(cross, target, source)
    assert words.shape == (1, 1, 3, 2), "target words + the </s> row; source words without </s>"
    assert head_links(words, 2) == [[frozenset({(0, 0), (1, 1)})]]
    # Shifted by one: word 0 reads row 1 (-> "dog"), word 1 reads the </s> row (-> "a", since </s> is dropped).
    assert head_links(words, 2, shift=1) == [[frozenset({(1, 0), (0, 1)})]]
    scores = score_heads([cross], [target], [source], [(frozenset({(0, 0), (1, 1)}), None)], [2], [2])
    assert scores.heads[0, 0] == 0.0 and scores.layers[0] == 0.0 and scores.sentences == 1


def test_model_one_learns_the_textbook_corpus():
    # Koehn's example: "das" is learnt from "the" because "buch" is explained by "book".
    source = [words("the house"), words("the book"), words("a book")]
    target = [words("das Haus"), words("das Buch"), words("ein Buch")]
    links = symmetric_links(source, target, 0)
    assert [sure for sure, _ in links] == [{(0, 0), (1, 1)}] * 3


def test_the_shipped_reference_covers_test2016():
    reference = read_reference(MULTI30K_TEST2016)
    assert len(reference) == 1000
    assert all(sure <= possible for sure, possible in reference)
    assert sum(len(sure) for sure, _ in reference) > 5000
