"""Cross-attention as word alignment, scored by alignment error rate (Och & Ney, 2003, Section 4.2).

A reference gives sure links S and possible links P ⊇ S between source word i and target word j (Pharaoh
"i-j", 0-based over whitespace words). A hypothesis A scores

    AER = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|),

summed over the sentences of a corpus before dividing (counts, not a mean of per-sentence rates). 0 is perfect.

A head's alignment links each target word j to the source word its cross-attention weighs most (word level:
pieces merged as explorer/analysis/words.py does; `</s>` on either side is never linked). The attention is read
teacher-forced on the reference translation. The row that produces a word is not always the one that looks at
its source: attention often looks at the next source word, or the row before the word does, a known pitfall of
reading attention as alignment.
`shift` reads word j's link from the row of word j + shift instead (+1: the row after; the final `</s>` row
serves the last word).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.analysis.words import merge_attention_to_words
from explorer.tokenizer import word_groups

Links = frozenset[tuple[int, int]]  # (source word, target word), 0-based


def parse_links(line: str) -> Links:
    """'0-0 1-2 3-1' -> {(0, 0), (1, 2), (3, 1)}."""
    return parse_reference(line)[1]


def parse_reference(line: str) -> tuple[Links, Links]:
    """A reference line -> (sure, possible): 'i-j' is a sure link, 'i?j' a possible one (the convention of the
    hand-aligned sets, e.g. the Europarl EN–DE set of Vilar et al.); every sure link is possible."""
    sure, possible = set(), set()
    for item in line.split():
        mark = "?" if "?" in item else "-"
        left, _, right = item.partition(mark)
        link = (int(left), int(right))
        possible.add(link)
        if mark == "-":
            sure.add(link)
    return frozenset(sure), frozenset(possible)


def format_reference(sure: Iterable[tuple[int, int]], possible: Iterable[tuple[int, int]]) -> str:
    """The line `parse_reference` reads: sure links as 'i-j', the possible-only ones as 'i?j', in order."""
    sure_set = set(sure)
    links = sorted(sure_set | set(possible))
    return " ".join(f"{i}-{j}" if (i, j) in sure_set else f"{i}?{j}" for i, j in links)


def format_links(links: Iterable[tuple[int, int]]) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


@dataclass(frozen=True)
class AerCounts:
    """The four counts AER is made of, summable over sentences."""

    hits_sure: int = 0  # |A ∩ S|
    hits_possible: int = 0  # |A ∩ P|
    hypothesis: int = 0  # |A|
    sure: int = 0  # |S|

    def __add__(self, other: AerCounts) -> AerCounts:
        return AerCounts(
            self.hits_sure + other.hits_sure,
            self.hits_possible + other.hits_possible,
            self.hypothesis + other.hypothesis,
            self.sure + other.sure,
        )

    @property
    def aer(self) -> float:
        total = self.hypothesis + self.sure
        return 1.0 - (self.hits_sure + self.hits_possible) / total if total else 0.0


def aer_counts(hypothesis: Links, sure: Links, possible: Links | None = None) -> AerCounts:
    """Counts of one sentence; `possible` defaults to `sure` (a reference without possible links). S ⊆ P is
    assumed, as in Och & Ney: a sure link is always possible."""
    allowed = sure | (possible or frozenset())
    return AerCounts(len(hypothesis & sure), len(hypothesis & allowed), len(hypothesis), len(sure))


def aer(hypothesis: Links, sure: Links, possible: Links | None = None) -> float:
    return aer_counts(hypothesis, sure, possible).aer


def word_cross(cross: np.ndarray, target_pieces: Sequence[str], source_pieces: Sequence[str]) -> np.ndarray:
    """Piece-level cross-attention (layers, heads, tgt, src) -> word level (layers, heads, target words + 1,
    source words): the query rows of the target's words and, last, the `</s>` row; the key columns of the
    source's words only (`</s>` dropped, so a row sums to what falls on words)."""
    rows = word_groups(target_pieces)
    cols = [g for g in word_groups(source_pieces) if source_pieces[g[0]] != "</s>"]
    return merge_attention_to_words(cross, rows, cols)


def head_links(words: np.ndarray, n_target_words: int, shift: int = 0) -> list[list[Links]]:
    """Each head's argmax links: words (layers, heads, rows, source words) from `word_cross`, whose first
    `n_target_words` rows are the target's words. Word j is linked to the argmax of row j + shift (rows outside
    the matrix give no link). Returns [layer][head] -> links."""
    best = words.argmax(axis=-1)  # (layers, heads, rows)
    rows = words.shape[-2]
    out = []
    for layer in range(words.shape[0]):
        per_head = []
        for head in range(words.shape[1]):
            per_head.append(
                frozenset(
                    (int(best[layer, head, j + shift]), j) for j in range(n_target_words) if 0 <= j + shift < rows
                )
            )
        out.append(per_head)
    return out


def layer_mean_links(words: np.ndarray, n_target_words: int, shift: int = 0) -> list[Links]:
    """The argmax links of each layer's mean over heads."""
    return [layer[0] for layer in head_links(words.mean(axis=1, keepdims=True), n_target_words, shift)]


@dataclass(frozen=True)
class AlignmentScores:
    """AER of every cross-attention head (layers, heads) and of each layer's mean over heads (layers,), with
    `shift`, over `sentences` sentence pairs (`skipped`: pairs whose pieces did not match the reference's words)."""

    shift: int
    heads: np.ndarray
    layers: np.ndarray
    sentences: int
    skipped: int

    def ranked(self) -> list[tuple[int, int, float]]:
        """(layer, head, AER), 0-based, the best (lowest) first."""
        flat = [(layer, head, float(self.heads[layer, head])) for layer, head in np.ndindex(*self.heads.shape)]
        return sorted(flat, key=lambda item: item[2])


class NoMatchingPairs(ValueError):
    """No sentence pair's pieces joined into the reference's words: no head can be scored."""


def score_heads(
    crosses: Sequence[np.ndarray],
    target_pieces: Sequence[Sequence[str]],
    source_pieces: Sequence[Sequence[str]],
    references: Sequence[tuple[Links, Links | None]],
    source_words: Sequence[int],
    target_words: Sequence[int],
    shift: int = 0,
) -> AlignmentScores:
    """Corpus AER of every head and layer mean. Per sentence: cross (layers, heads, tgt, src) teacher-forced on
    the reference; its pieces; the reference (sure, possible); and the number of whitespace words on each side,
    which the pieces' words must match (a pair where they do not is skipped and counted)."""
    heads_total: list[list[AerCounts]] | None = None
    layers_total: list[AerCounts] | None = None
    used = skipped = 0
    for cross, tgt, src, (sure, possible), n_src, n_tgt in zip(
        crosses, target_pieces, source_pieces, references, source_words, target_words, strict=True
    ):
        words = word_cross(cross, tgt, src)
        if words.shape[-1] != n_src or words.shape[-2] != n_tgt + 1:
            skipped += 1
            continue
        per_head = head_links(words, n_tgt, shift)
        per_layer = layer_mean_links(words, n_tgt, shift)
        if heads_total is None or layers_total is None:
            heads_total = [[AerCounts() for _ in row] for row in per_head]
            layers_total = [AerCounts() for _ in per_layer]
        for layer, row in enumerate(per_head):
            for head, links in enumerate(row):
                heads_total[layer][head] += aer_counts(links, sure, possible)
            layers_total[layer] += aer_counts(per_layer[layer], sure, possible)
        used += 1
    if heads_total is None or layers_total is None:
        # A model whose pieces never join into the reference's words (an imported tokenizer that splits on other
        # marks): there is nothing to score, which the caller says in words.
        raise NoMatchingPairs(f"none of the {skipped} sentence pairs matched its reference's words")
    return AlignmentScores(
        shift,
        np.array([[c.aer for c in row] for row in heads_total]),
        np.array([c.aer for c in layers_total]),
        used,
        skipped,
    )
