"""What packed decoding carries from one step to the next (`PackedCache`), apart from the decoder that makes
it, so that the scripted step (`scripted_decoding.py`) and the Python step (`packed_decoding.py`) both read it
and neither imports the other's caller."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from explorer.fastpath.folded_cross import FoldedCross


@dataclass(frozen=True)
class PackedCache:
    """What packed decoding carries between steps; reorderable by row like `DecoderCache`.

    Rows come in groups of `group_size` consecutive rows that read the same encoder memory (a sentence's
    beam): the cross-attention keys/values and the source mask are kept once per group, so reordering the
    beam within its sentences copies no memory, and the step attends with the group's rows as queries of
    one attention call.

    self_kv: (capacity, layers, rows, 2, heads, d_k), keys then values of the `position` generated positions
        of every layer, in a buffer with room to grow: a step writes its position in place (the buffer is
        shared with the cache the step grew, whose positions it leaves as they were). Positions outermost, so
        the filled part is one contiguous block that reordering copies, and a step's keys/values one slab.
    cross_kv: (layers, 2, groups, heads, src, d_k), the encoder memory projected once.
    src_mask: (groups, 1, 1, src) float, 0 on real tokens, -inf on padding (the boolean mask, as SDPA adds it).
    """

    self_kv: torch.Tensor | None
    cross_kv: torch.Tensor
    src_mask: torch.Tensor
    position: int  # index of the next target position
    group_size: int = 1
    folded: FoldedCross | None = None  # the cross-attention folded with the memory, per group, where it pays

    def select(self, rows: torch.Tensor) -> PackedCache:
        self_kv = None
        if self.self_kv is not None:  # only the filled positions, into a buffer of the same capacity
            old = self.self_kv
            self_kv = old.new_empty((old.shape[0], old.shape[1], rows.shape[0], *old.shape[3:]))
            torch.index_select(old[: self.position], 2, rows, out=self_kv[: self.position])
        size = self.group_size
        groups = rows.tolist() if size == 1 else [row // size for row in rows.tolist()]
        runs = _runs(groups)
        if runs is not None:  # the new rows are again whole groups of one size: keep the memory per group
            kept, new_size = runs
            if kept == list(range(self.cross_kv.shape[2])):
                return PackedCache(self_kv, self.cross_kv, self.src_mask, self.position, new_size, self.folded)
            index = torch.tensor(kept, dtype=torch.long, device=rows.device)
        else:  # rows of one group apart: one copy of the memory per row
            new_size, index = 1, torch.tensor(groups, dtype=torch.long, device=rows.device)
        folded = None if self.folded is None else self.folded.select(index)
        cross_kv, src_mask = self.cross_kv.index_select(2, index), self.src_mask.index_select(0, index)
        return PackedCache(self_kv, cross_kv, src_mask, self.position, new_size, folded)


def _runs(groups: list[int]) -> tuple[list[int], int] | None:
    """[g0]*m + [g1]*m + … with g0, g1, … distinct -> ([g0, g1, …], m); anything else -> None."""
    if not groups:
        return None
    size = 1
    while size < len(groups) and groups[size] == groups[0]:
        size += 1
    if len(groups) % size:
        return None
    kept = groups[::size]
    if len(set(kept)) != len(kept):
        return None
    for start, group in zip(range(0, len(groups), size), kept, strict=True):
        if groups[start : start + size] != [group] * size:
            return None
    return kept, size
