"""Batches by token budget, as in the paper (Section 5.1): "Sentence pairs were batched together by
approximate sequence length. Each training batch contained a set of sentence pairs containing approximately
25000 source tokens and 25000 target tokens."

Grouping pairs of similar length keeps padding small, so a batch's cost is close to its real tokens.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from explorer.tokenizer import BOS_ID, EOS_ID, PAD_ID


def token_budget_batches(
    src_lengths: Sequence[int],
    tgt_lengths: Sequence[int],
    max_tokens: int,
    *,
    shuffle: bool,
    seed: int = 0,
) -> list[list[int]]:
    """Indices of pairs grouped into batches of at most `max_tokens` padded tokens.

    A batch of B pairs costs `B * max(longest source, longest target)` tokens: the padded size of the larger
    of its two tensors. Pass the lengths the tensors will have (the target gets BOS/EOS, so `len(y) + 1`).
    Pairs are sorted by length over the whole corpus, then packed greedily; a pair longer than the budget
    still forms a batch of its own. With `shuffle`, equal lengths are ordered at random and the batch order
    is shuffled, both from `seed`, so each epoch (seed) sees different batches in a different order; every
    index appears in exactly one batch either way.
    """
    if len(src_lengths) != len(tgt_lengths):
        raise ValueError(f"got {len(src_lengths)} source lengths but {len(tgt_lengths)} target lengths")
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}")
    rng = random.Random(seed)
    tie_break = [rng.random() for _ in src_lengths] if shuffle else list(range(len(src_lengths)))
    order = sorted(
        range(len(src_lengths)),
        key=lambda i: (max(src_lengths[i], tgt_lengths[i]), src_lengths[i], tie_break[i]),
    )
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        length = max(src_lengths[index], tgt_lengths[index])
        if current and max(longest, length) * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(index)
        longest = max(longest, length)
    if current:
        batches.append(current)
    if shuffle:
        rng.shuffle(batches)
    return batches


def padding_fraction(batches: Sequence[Sequence[int]], src_lengths: Sequence[int], tgt_lengths: Sequence[int]) -> float:
    """Share of padding among all source and target tensor positions of `batches` (0 = no padding)."""
    padded = real = 0
    for batch in batches:
        src = [src_lengths[i] for i in batch]
        tgt = [tgt_lengths[i] for i in batch]
        padded += len(batch) * (max(src) + max(tgt))
        real += sum(src) + sum(tgt)
    return 1.0 - real / padded if padded else 0.0


@dataclass
class Batch:
    """Padded tensors for one training step (teacher forcing): the decoder reads `tgt_in`, predicts `tgt_out`."""

    src: torch.Tensor  # (batch, src_len) long, PAD after each sentence
    tgt_in: torch.Tensor  # (batch, tgt_len) long: BOS + y, then PAD
    tgt_out: torch.Tensor  # (batch, tgt_len) long: y + EOS, then PAD
    n_tgt_tokens: int  # non-PAD positions of tgt_out, to normalise the loss per token

    def to(self, device: torch.device | str) -> Batch:
        return Batch(
            src=self.src.to(device, non_blocking=True),
            tgt_in=self.tgt_in.to(device, non_blocking=True),
            tgt_out=self.tgt_out.to(device, non_blocking=True),
            n_tgt_tokens=self.n_tgt_tokens,
        )

    def pinned(self) -> Batch:
        """The same batch in page-locked host memory (CUDA only), so that `.to("cuda")` does not block."""
        return Batch(self.src.pin_memory(), self.tgt_in.pin_memory(), self.tgt_out.pin_memory(), self.n_tgt_tokens)

    @property
    def size(self) -> int:
        """Number of sentence pairs."""
        return self.src.shape[0]


def collate(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
    max_len: int | None = None,
) -> Batch:
    """Pad token ids (without BOS/EOS) into a `Batch`.

    With `max_len`, sources are cut to `max_len` tokens and targets to `max_len - 1`, so that `tgt_in` and
    `tgt_out`, which carry BOS/EOS, are at most `max_len` long.
    """
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"got {len(src_ids)} source sentences but {len(tgt_ids)} target sentences")
    if not src_ids:
        raise ValueError("cannot collate an empty batch")
    if max_len is not None and max_len < 2:
        raise ValueError(f"max_len must leave room for BOS/EOS (>= 2), got {max_len}")
    sources = [list(s) if max_len is None else list(s)[:max_len] for s in src_ids]
    targets = [list(t) if max_len is None else list(t)[: max_len - 1] for t in tgt_ids]
    src_len = max(1, max(len(s) for s in sources))  # a (B, 0) tensor would break attention masking
    tgt_len = max(len(t) for t in targets) + 1
    batch = len(sources)
    src = torch.full((batch, src_len), pad_id, dtype=torch.long)
    tgt_in = torch.full((batch, tgt_len), pad_id, dtype=torch.long)
    tgt_out = torch.full((batch, tgt_len), pad_id, dtype=torch.long)
    for row, (s, t) in enumerate(zip(sources, targets, strict=True)):
        src[row, : len(s)] = torch.tensor(s, dtype=torch.long)
        tgt_in[row, : len(t) + 1] = torch.tensor([bos_id, *t], dtype=torch.long)
        tgt_out[row, : len(t) + 1] = torch.tensor([*t, eos_id], dtype=torch.long)
    n_tgt_tokens = sum(len(t) + 1 for t in targets)
    return Batch(src=src, tgt_in=tgt_in, tgt_out=tgt_out, n_tgt_tokens=n_tgt_tokens)
