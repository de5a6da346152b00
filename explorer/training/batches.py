"""How a corpus becomes the trainer's batches: piece ids cut to the model's length, and the positions each
sequence takes in a batch. Shared by the trainer and the Train page's estimates (steps per epoch)."""

from __future__ import annotations

from collections.abc import Sequence

from explorer.data.corpus import ParallelCorpus
from explorer.tokenizer import Tokenizer


def encode_pairs(tokenizer: Tokenizer, corpus: ParallelCorpus, max_len: int) -> tuple[list[list[int]], list[list[int]]]:
    """Both sides as piece ids, each cut to max_len - 1 so the EOS (source) or BOS/EOS shift (target) fits."""
    limit = max_len - 1
    return (
        [ids[:limit] for ids in tokenizer.encode_batch(list(corpus.source))],
        [ids[:limit] for ids in tokenizer.encode_batch(list(corpus.target))],
    )


def batch_lengths(ids: Sequence[Sequence[int]]) -> list[int]:
    """Positions each sequence takes in a batch: its pieces plus the EOS or BOS that collate adds."""
    return [len(seq) + 1 for seq in ids]
