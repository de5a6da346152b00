"""A reference word aligner: IBM Model 1 (Brown et al., 1993, Section 4), trained by EM in both directions and
symmetrised, in numpy.

Why not eflomal or fast_align: eflomal 2.0 is published on PyPI only as source that needs Cython and a C compiler
at install time, and fast_align is a C++ program outside PyPI; a reference for one test set is not worth a
compiled dependency. Model 1 is the aligner the others start from: t(f | e) for every target word f and source
word e (or NULL), with no distortion model. Its alignments are rougher than a fast_align/eflomal reference, which
the alignment scores should be read with.

Training runs over whitespace words, lower-cased, of the whole training set plus the pairs to align (an
unsupervised aligner may see the sentences it aligns, as fast_align and eflomal are run). Each direction links
every target word to its most probable source word (none when NULL wins); the sure links are those both
directions find (intersection), the possible ones those either finds (union).

    python -m explorer.explain.ibm1 --train ../shared/data/multi30k/train --align ../shared/data/multi30k/test2016 \\
        --out explorer/explain/data/multi30k-test2016.en-de.align
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.explain.alignment import Links, format_reference

ITERATIONS = 8
NULL = 0  # the source vocabulary's first entry: the empty word every target word may come from


def words(line: str) -> list[str]:
    return line.lower().split()


@dataclass(frozen=True)
class Cooccurrences:
    """Every (target position, source word or NULL) pair of a corpus, as flat arrays: row g of `target_position`
    is a target word of some sentence; `pair` indexes the (source word, target word) table."""

    pair: np.ndarray  # (n,) index into the table of distinct (e, f) pairs
    target_position: np.ndarray  # (n,) global index of the target word
    source_index: np.ndarray  # (n,) the source word's position in its sentence, -1 for NULL
    pair_source: np.ndarray  # (pairs,) the source word id of each distinct pair


def cooccurrences(source: Sequence[Sequence[str]], target: Sequence[Sequence[str]]) -> Cooccurrences:
    """The flat pairs of every sentence pair, source words with NULL first."""
    source_ids: dict[str, int] = {"<null>": NULL}
    target_ids: dict[str, int] = {}
    e_parts, f_parts, positions, indices = [], [], [], []
    offset = 0
    for src, tgt in zip(source, target, strict=True):
        e = np.array([NULL] + [source_ids.setdefault(w, len(source_ids)) for w in src], dtype=np.int64)
        f = np.array([target_ids.setdefault(w, len(target_ids)) for w in tgt], dtype=np.int64)
        e_parts.append(np.tile(e, len(f)))  # target word by target word, every source word (NULL first)
        f_parts.append(np.repeat(f, len(e)))
        positions.append(np.repeat(np.arange(offset, offset + len(f)), len(e)))
        indices.append(np.tile(np.arange(-1, len(src)), len(f)))
        offset += len(f)
    n_target = max(len(target_ids), 1)
    keys = np.concatenate(e_parts) * n_target + np.concatenate(f_parts)
    distinct, pair = np.unique(keys, return_inverse=True)
    return Cooccurrences(pair, np.concatenate(positions), np.concatenate(indices), distinct // n_target)


def train(pairs: Cooccurrences, iterations: int = ITERATIONS) -> np.ndarray:
    """EM for Model 1 (Brown et al., Eq. 17): t(f | e) for each distinct pair, from uniform. Returns (pairs,)."""
    pair_source = pairs.pair_source
    t = np.ones(len(pair_source), dtype=np.float64)
    for _ in range(iterations):
        weight = t[pairs.pair]
        posterior = weight / np.bincount(pairs.target_position, weight)[pairs.target_position]
        counts = np.bincount(pairs.pair, posterior, minlength=len(t))
        t = counts / np.bincount(pair_source, counts)[pair_source]
    return t


def viterbi(pairs: Cooccurrences, t: np.ndarray) -> np.ndarray:
    """(target words,): the source position each target word is most probably from (-1: NULL)."""
    score = t[pairs.pair]
    # Sort by target word, then by score: the last entry of each target word's run is its best source.
    order = np.lexsort((score, pairs.target_position))
    last = np.r_[pairs.target_position[order][1:] != pairs.target_position[order][:-1], True]
    return pairs.source_index[order][last]


def directional_links(source: Sequence[Sequence[str]], target: Sequence[Sequence[str]], first: int) -> list[Links]:
    """Model 1 trained on all pairs; the (source word, target word) links of the pairs from index `first` on."""
    pairs = cooccurrences(source, target)
    best = viterbi(pairs, train(pairs))
    out, offset = [], 0
    for n, tgt in enumerate(target):
        chosen = best[offset : offset + len(tgt)]
        offset += len(tgt)
        if n >= first:
            out.append(frozenset((int(i), j) for j, i in enumerate(chosen) if i >= 0))
    return out


def symmetric_links(
    source: Sequence[Sequence[str]], target: Sequence[Sequence[str]], first: int
) -> list[tuple[Links, Links]]:
    """(sure, possible) per pair from index `first` on: the intersection and the union of both directions."""
    forward = directional_links(source, target, first)
    backward = directional_links(target, source, first)
    out = []
    for there, back in zip(forward, backward, strict=True):
        reverse = frozenset((i, j) for j, i in back)
        out.append((there & reverse, there | reverse))
    return out


def _read(prefix: str, side: str) -> list[list[str]]:
    return [words(line) for line in Path(f"{prefix}.{side}").read_text(encoding="utf-8").splitlines()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m explorer.explain.ibm1", description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", required=True, help="training pairs: PREFIX.en and PREFIX.de")
    parser.add_argument("--align", required=True, help="the pairs to align: PREFIX.en and PREFIX.de")
    parser.add_argument("--out", type=Path, required=True, help="reference alignments, one line per pair")
    args = parser.parse_args(argv)
    align_src, align_tgt = _read(args.align, "en"), _read(args.align, "de")
    source, target = _read(args.train, "en") + align_src, _read(args.train, "de") + align_tgt
    links = symmetric_links(source, target, len(source) - len(align_src))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(format_reference(sure, possible) + "\n" for sure, possible in links))


if __name__ == "__main__":
    main()
