"""Splitting a line into sentences before translating: abbreviations and a missing final
period must not split wrongly, and lines regroup in order."""

from __future__ import annotations

import pytest

from explorer.text import join_sentences, split_lines, split_sentences


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "A man is riding a bike. Two dogs play in the snow. A girl climbs into a wooden playhouse.",
            ["A man is riding a bike.", "Two dogs play in the snow.", "A girl climbs into a wooden playhouse."],
        ),
        ("Mr. Smith rides a bike. Mrs. Jones waves.", ["Mr. Smith rides a bike.", "Mrs. Jones waves."]),
        (
            "A man sells fruit, e.g. apples and pears. He smiles. She waves",
            ["A man sells fruit, e.g. apples and pears.", "He smiles.", "She waves"],
        ),
        (
            "Dr. Brown walks at 3 p.m. in the U.S. capital. It rains!  Why?",
            ["Dr. Brown walks at 3 p.m. in the U.S. capital.", "It rains!", "Why?"],
        ),
        ("A man is riding a bike", ["A man is riding a bike"]),
        ('"Look at that!" she said. He looked.', ['"Look at that!" she said.', "He looked."]),
        (
            "a man rides a bicycle . the dog walks in the park .",
            ["a man rides a bicycle .", "the dog walks in the park ."],
        ),
        ("  ", []),
    ],
)
def test_split_sentences(line: str, expected: list[str]) -> None:
    assert split_sentences(line) == expected


def test_split_lines_regroups_in_order_with_blank_lines() -> None:
    lines = ["One. Two. Three.", "", "Alone", "A man rides. A dog runs."]
    split = split_lines(lines)
    assert split.sentences == ["One.", "Two.", "Three.", "Alone", "A man rides.", "A dog runs."]
    assert split.regroup([s.upper() for s in split.sentences]) == [
        ["ONE.", "TWO.", "THREE."],
        [],
        ["ALONE"],
        ["A MAN RIDES.", "A DOG RUNS."],
    ]
    with pytest.raises(AssertionError, match="one result per sentence"):
        split.regroup(["x"])


def test_split_can_be_switched_off() -> None:
    split = split_lines(["One. Two.", " "], split=False)
    assert split.sentences == ["One. Two."] and split.spans == [(0, 1), (1, 1)]


def test_join_sentences_leaves_out_empty_translations() -> None:
    assert join_sentences(["Eins.", "", "Zwei."]) == "Eins. Zwei."
    assert join_sentences([]) == ""
