"""A line of several sentences, split into sentences before translating and joined again after.

The model was trained on Multi30k captions, one sentence each: given "A man rides. A dog runs." as one
input it tends to translate the first sentence only, or run the two together. So a line is split into
sentences, every sentence is translated on its own (all of them in one batch), and the translations are
joined with a space. Output line N is still the translation of input line N.

The splitting is `sentencex` (Wikimedia's rule-based segmenter: per-language abbreviation lists, so
"Mr. Smith", "e.g." and "3 p.m." do not end a sentence; maintained; about 2 µs a line) rather than a
hand-written regular expression, which gets those cases wrong. A line without final punctuation is one
sentence. Pure functions, no streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import sentencex  # type: ignore[import-untyped]  # ships no py.typed

T = TypeVar("T")


def split_sentences(text: str, lang: str = "en") -> list[str]:
    """The sentences of `text`, stripped, in order; [] for a blank line. `lang` is the source language."""
    if not text.strip():
        return []
    return [s.strip() for s in sentencex.segment(lang, text) if s.strip()]


def join_sentences(translations: Iterable[str]) -> str:
    """The translations of one line's sentences as one line: joined with a space, empty ones left out."""
    return " ".join(t for t in translations if t)


@dataclass(frozen=True)
class SplitLines:
    """Lines split into one flat list of sentences (what the model translates, as one batch), and for each
    line the slice of that list that holds its sentences (empty for a blank line)."""

    sentences: list[str]
    spans: list[tuple[int, int]]  # per line: [start, end) into `sentences`

    def regroup(self, per_sentence: Sequence[T]) -> list[list[T]]:
        """One result per sentence (in `sentences` order) -> the results of each line."""
        assert len(per_sentence) == len(self.sentences), (
            f"expected one result per sentence ({len(self.sentences)}), got {len(per_sentence)}"
        )
        return [list(per_sentence[start:end]) for start, end in self.spans]


def split_lines(lines: Iterable[str], lang: str = "en", split: bool = True) -> SplitLines:
    """Every line's sentences; with `split=False` each non-blank line is one sentence, as it stands."""
    sentences: list[str] = []
    spans: list[tuple[int, int]] = []
    for line in lines:
        parts = split_sentences(line, lang) if split else ([line] if line.strip() else [])
        spans.append((len(sentences), len(sentences) + len(parts)))
        sentences.extend(parts)
    return SplitLines(sentences, spans)
