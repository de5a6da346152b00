"""How a corpus becomes the trainer's batches: piece ids cut to the model's length, and the positions each
sequence takes in a batch, and the batches of an epoch. Shared by the trainer and the Train page's estimates."""

from __future__ import annotations

from collections.abc import Sequence

from explorer.data.batching import token_budget_batches
from explorer.data.corpus import ParallelCorpus
from explorer.tokenizer import Tokenizer


def encode_pairs(tokenizer: Tokenizer, corpus: ParallelCorpus, max_len: int) -> tuple[list[list[int]], list[list[int]]]:
    """Both sides as piece ids, each cut to max_len - 1 so the EOS (source) or BOS/EOS shift (target) fits; the
    target through the target side of the tokenizer (an imported model's own SentencePiece model and vocabulary)."""
    limit = max_len - 1
    return (
        [ids[:limit] for ids in tokenizer.encode_batch(list(corpus.source))],
        [ids[:limit] for ids in tokenizer.encode_target_batch(list(corpus.target))],
    )


def batch_lengths(ids: Sequence[Sequence[int]]) -> list[int]:
    """Positions each sequence takes in a batch: its pieces plus the EOS or BOS that collate adds."""
    return [len(seq) + 1 for seq in ids]


def epoch_batches(
    ids: tuple[list[list[int]], list[list[int]]], batch_tokens: int, *, seed: int, epoch: int
) -> list[list[int]]:
    """The token-budget batches (lists of pair indices) a run with `seed` draws from `ids` in `epoch`: each
    epoch shuffled anew, the same in every run with that seed."""
    return token_budget_batches(
        batch_lengths(ids[0]), batch_lengths(ids[1]), batch_tokens, shuffle=True, seed=seed * 100003 + epoch
    )
