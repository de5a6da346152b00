"""The AER of every cross-attention head against a reference alignment (explorer/explain/alignment.py), with the
attention read teacher-forced on the reference translation, and the project's reference for Multi30k test2016
(explorer/explain/data/, built by explorer/explain/ibm1.py); and one pair's word-level attention beside its
reference, for drawing a head's links over it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.explain.alignment import AlignmentScores, Links, head_links, parse_reference, score_heads, word_cross
from explorer.explain.value_weighted import value_weighted
from explorer.inference import attention_for, encode_sources
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer

REFERENCE_DIR = Path(__file__).resolve().parent / "data"
# Symmetrised IBM Model 1 over Multi30k train + test2016 (explorer/explain/ibm1.py; its docstring has the command).
MULTI30K_TEST2016 = REFERENCE_DIR / "multi30k-test2016.en-de.align"
SHIFTS = (0, 1)  # as read, and shifted by one (word j read from the row after it)
BATCH = 32


def read_reference(path: str | Path) -> list[tuple[Links, Links]]:
    """(sure, possible) per line of a reference file ('i-j' sure, 'i?j' possible)."""
    return [parse_reference(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def align_heads(
    model: Transformer,
    tokenizer: Tokenizer,
    sources: Sequence[str],
    targets: Sequence[str],
    references: Sequence[tuple[Links, Links]],
    *,
    shifts: Sequence[int] = SHIFTS,
    progress: Callable[[int, int], None] | None = None,
) -> list[AlignmentScores]:
    """AER of every head and layer mean, once per shift, over the pairs (source, reference translation, reference
    alignment); `progress(done, total)` after each batch."""
    assert len(sources) == len(targets) == len(references), (
        f"{len(sources)} sources, {len(targets)} targets and {len(references)} alignments must match"
    )
    config = model.config
    source_ids, _ = encode_sources(tokenizer, sources, config.max_len, config.eos_id)
    target_ids, _ = encode_sources(tokenizer, targets, config.max_len, config.eos_id)
    crosses = []
    for start in range(0, len(sources), BATCH):
        batch = slice(start, start + BATCH)
        crosses += [a.cross for a in attention_for(model, source_ids[batch], target_ids[batch])]
        if progress is not None:
            progress(min(start + BATCH, len(sources)), len(sources))
    source_pieces = [tokenizer.pieces(ids) for ids in source_ids]
    target_pieces = [tokenizer.target_pieces(ids) for ids in target_ids]
    source_words = [len(s.split()) for s in sources]
    target_words = [len(t.split()) for t in targets]
    return [
        score_heads(crosses, target_pieces, source_pieces, references, source_words, target_words, shift)
        for shift in shifts
    ]


@dataclass(frozen=True)
class SentenceAlignment:
    """One sentence pair's cross-attention at word level beside its reference alignment, teacher-forced on the
    reference translation (as `align_heads` reads it).

    raw, value_weighted: (layers, heads, target words + 1, source words): rows are the target's words and, last,
    the `</s>` row; columns the source's words (`</s>` dropped); raw weights, or value-weighted shares
    (explorer/explain/value_weighted.py) merged the same way.
    """

    source_words: tuple[str, ...]
    target_words: tuple[str, ...]
    raw: np.ndarray
    value_weighted: np.ndarray
    sure: Links
    possible: Links

    def head_links(self, layer: int, head: int, *, shift: int = 0, weighted: bool = False) -> Links:
        """The argmax links of one head (0-based), as scored: target word j linked to the source word row j + shift
        weighs most."""
        words = (self.value_weighted if weighted else self.raw)[layer : layer + 1, head : head + 1]
        return head_links(words, len(self.target_words), shift)[0][0]


def align_sentence(
    model: Transformer, tokenizer: Tokenizer, source: str, target: str, reference: tuple[Links, Links]
) -> SentenceAlignment | None:
    """The pair's word-level cross-attention (raw and value-weighted) and its reference; None when the model's
    pieces do not make the whitespace words the reference counts (the pairs `align_heads` skips)."""
    config = model.config
    (source_ids,), _ = encode_sources(tokenizer, [source], config.max_len, config.eos_id)
    (target_ids,), _ = encode_sources(tokenizer, [target], config.max_len, config.eos_id)
    explained = value_weighted(model, source_ids, target_ids)
    source_pieces, target_pieces = tokenizer.pieces(source_ids), tokenizer.target_pieces(target_ids)
    raw = word_cross(explained.raw.cross, target_pieces, source_pieces)
    weighted = word_cross(explained.weighted("cross"), target_pieces, source_pieces)
    source_words, target_words = tuple(source.split()), tuple(target.split())
    if raw.shape[-1] != len(source_words) or raw.shape[-2] != len(target_words) + 1:
        return None
    return SentenceAlignment(source_words, target_words, raw, weighted, *reference)
