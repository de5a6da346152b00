"""The paper's Figures 3–5 on any loaded model: which encoder self-attention heads make the links the paper's
visualisations show, found by a score, not by picking the paper's layer 5.

Figure 3 ("an example of the attention mechanism following long-distance dependencies in the encoder
self-attention in layer 5 of 6"): heads attending from "making" to the distant "more difficult".
Figures 4 and 5 (layer 5 of 6, "apparently involved in anaphora resolution"): heads attending from "its" to its
antecedent "Law".

The score of a head is the attention mass its query word puts on the target words: the rows of the query word's
pieces, summed over the target words' pieces (keys), averaged over the query's pieces. With n source pieces a head
that attends uniformly scores k / n for k target pieces (`chance`); every (layer, head) is ranked by this score.
Pure functions of (model, tokenizer): no streamlit.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.inference import attention_for, encode_sources
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer, word_groups, word_labels

FIGURE3_SENTENCE = (
    "It is in this spirit that a majority of American governments have passed new laws since 2009 making the "
    "registration or voting process more difficult."
)
FIGURE45_SENTENCE = (
    "The Law will never be perfect, but its application should be just - this is what we are missing, in my opinion."
)


@dataclass(frozen=True)
class Link:
    """A link a paper figure shows: from the word `query` to the words `targets`, in `sentence`."""

    figure: str  # "3" or "4-5"
    sentence: str
    query: str
    targets: tuple[str, ...]


LINKS = (
    Link("3", FIGURE3_SENTENCE, "making", ("more", "difficult")),
    Link("4-5", FIGURE45_SENTENCE, "its", ("law",)),
)
METHOD = (
    "score of a head = the attention mass the query word's pieces put on the target words' pieces (their keys "
    "summed, the query's pieces averaged), in encoder self-attention; every layer and head ranked by it"
)


@dataclass(frozen=True)
class HeadLink:
    layer: int  # 0-based
    head: int  # 0-based
    score: float  # attention mass from the query word onto the target words, 0..1
    strongest: str  # the word the query word attends to most in this head
    hits: bool  # whether that word is one of the targets


@dataclass(frozen=True)
class FigureFinding:
    """The heads of one model ranked by how strongly they make one figure's link."""

    link: Link
    pieces: list[str]  # the source pieces the encoder read
    words: list[str]  # the words they form (explorer.tokenizer.word_labels)
    query_pieces: list[int]  # positions of the query word's pieces
    target_pieces: list[int]  # positions of the target words' pieces
    scores: np.ndarray  # (layers, heads) the score of every head
    ranked: list[HeadLink]  # every head, best first
    chance: float  # the score of a head attending uniformly: len(target_pieces) / len(pieces)
    encoder_self: np.ndarray  # (layers, heads, n, n) the sentence's encoder self-attention

    @property
    def best(self) -> HeadLink:
        return self.ranked[0]


class MissingWords(ValueError):
    """The model's source pieces do not form these words of the figure's link (`words`)."""

    def __init__(self, words: Sequence[str]) -> None:
        super().__init__(f"the source pieces of this model have no word {', '.join(map(repr, words))}")
        self.words = tuple(words)


def _plain(word: str) -> str:
    """A word as the analysis compares it: lower case, without surrounding punctuation ("difficult." -> "difficult")."""
    return word.strip(string.punctuation + "\u2581 ").lower()


def _positions(groups: Sequence[Sequence[int]], words: Sequence[str], wanted: str, after: int = -1) -> list[int]:
    """The piece positions of the first word equal to `wanted` (see `_plain`) after word index `after`."""
    for index, word in enumerate(words):
        if index > after and _plain(word) == wanted:
            return list(groups[index])
    return []


def find_heads(model: Transformer, tokenizer: Tokenizer, link: Link) -> FigureFinding:
    """Rank every encoder self-attention head of `model` by the link's score on its sentence.

    Raises MissingWords when the model's tokenizer does not keep the query or a target word as a word of its own
    (a model for another source language reads the English sentence as it can; the words are then missing).
    """
    config = model.config
    ids, _ = encode_sources(tokenizer, [link.sentence], config.max_len, config.eos_id)
    pieces = tokenizer.pieces(ids[0])
    groups, words = word_groups(pieces), word_labels(pieces)
    query = _positions(groups, words, link.query)
    targets = sorted({p for word in link.targets for p in _positions(groups, words, word)})
    missing = [w for w in (link.query, *link.targets) if not _positions(groups, words, w)]
    if missing:
        raise MissingWords(missing)
    attention = attention_for(model, ids, [[config.eos_id]])[0].encoder_self  # (layers, heads, n, n)
    scores = attention[:, :, query][:, :, :, targets].sum(axis=-1).mean(axis=-1)  # (layers, heads)
    # The word each head's query row attends to most, its pieces' weights summed (the query word itself excluded).
    word_of = np.zeros(len(pieces), dtype=int)
    for index, group in enumerate(groups):
        word_of[group] = index
    query_word = int(word_of[query[0]])
    ranked = []
    for layer, head in sorted(np.ndindex(scores.shape), key=lambda lh: (-scores[lh], lh)):
        row = attention[layer, head, query].mean(axis=0)  # (n,)
        per_word = np.bincount(word_of, weights=row, minlength=len(groups))
        per_word[query_word] = -1.0
        strongest = int(per_word.argmax())
        hits = _plain(words[strongest]) in link.targets
        ranked.append(HeadLink(int(layer), int(head), float(scores[layer, head]), words[strongest], hits))
    return FigureFinding(
        link, pieces, words, query, targets, scores, ranked, len(targets) / len(pieces), attention.astype(np.float64)
    )


def find_all(model: Transformer, tokenizer: Tokenizer) -> dict[str, FigureFinding | tuple[str, ...]]:
    """Each figure's finding, or the words of its link this model's source pieces do not form."""
    found: dict[str, FigureFinding | tuple[str, ...]] = {}
    for link in LINKS:
        try:
            found[link.figure] = find_heads(model, tokenizer, link)
        except MissingWords as error:
            found[link.figure] = error.words
    return found


def summary(finding: FigureFinding, top: int = 3) -> str:
    """One line naming the best heads (1-based, as the pages count) and their scores against chance."""
    heads = ", ".join(
        f"layer {h.layer + 1} head {h.head + 1} ({h.score:.2f}{', strongest word ' + repr(h.strongest)})"
        for h in finding.ranked[:top]
    )
    words = " ".join(finding.link.targets)
    return (
        f"Figure {finding.link.figure}: {finding.link.query!r} -> {words!r}: {heads}; uniform attention would give "
        f"{finding.chance:.2f}"
    )
