"""Attention sinks: heads whose weight piles on end or punctuation tokens but that move little from them.

Kobayashi et al. (2020, Section 5) found that the weights BERT puts on [SEP], [CLS] and punctuation are large
while the norms ‖α f(x)‖ there are small: the head "looks" at those tokens as a no-op. Per head we report the
two numbers side by side:

- raw share: the mean over query rows of the weight on sink tokens, Σ_{j ∈ S} α_ij;
- value-weighted share: the same mean of the share of ‖α_ij f(x_j)‖ that sits on S.

A head is flagged a sink when most of its weight sits on S (raw share ≥ `SINK_RAW_SHARE`) but the
value-weighted share there is at most `SINK_KEEPS` of it: what the weights say is mostly not what moves.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.explain.value_weighted import ValueWeighted
from explorer.paper import FAMILIES, HEAD_CODES

SINK_RAW_SHARE = 0.5  # "most of the weight"
SINK_KEEPS = 0.5  # the value-weighted share is at most half the raw share
END_PIECES = frozenset({"</s>", "<s>"})


def is_sink_piece(piece: str) -> bool:
    """'</s>', '<s>', or a piece that is only punctuation once the word-start marker is dropped ('▁.', ',')."""
    if piece in END_PIECES:
        return True
    text = piece.replace("\u2581", "")
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text)


@dataclass(frozen=True)
class HeadSink:
    """One head's shares on sink tokens (0-based layer and head)."""

    family: str
    layer: int
    head: int
    raw_share: float
    weighted_share: float

    @property
    def name(self) -> str:
        """'cross.2.0': the FAMILY.LAYER.HEAD spelling of the command line (0-based)."""
        return f"{HEAD_CODES[self.family]}.{self.layer}.{self.head}"

    @property
    def is_sink(self) -> bool:
        return self.raw_share >= SINK_RAW_SHARE and self.weighted_share <= SINK_KEEPS * self.raw_share


def sink_shares(raw: np.ndarray, weighted: np.ndarray, sink_keys: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    """raw, weighted (layers, heads, q, k), rows summing to one; sink_keys (k,) -> (raw share, value-weighted
    share), each (layers, heads): the mean over query rows of the mass on the sink keys."""
    r, w = np.asarray(raw, dtype=np.float64), np.asarray(weighted, dtype=np.float64)
    mask = np.asarray(sink_keys, dtype=bool)
    assert r.shape == w.shape and r.shape[-1] == mask.shape[0], (
        f"raw {r.shape} and weighted {w.shape} must match, with {mask.shape[0]} keys"
    )
    return r[..., mask].sum(-1).mean(-1), w[..., mask].sum(-1).mean(-1)


def family_sinks(explained: ValueWeighted, family: str, key_pieces: Sequence[str]) -> list[HeadSink]:
    """Every head of `family`, in (layer, head) order; key_pieces are the family's keys (source pieces for the
    encoder's self-attention and the cross-attention, the target input for the decoder's)."""
    raw, weighted = sink_shares(
        explained.raw.family(family), explained.weighted(family), [is_sink_piece(p) for p in key_pieces]
    )
    return [
        HeadSink(family, layer, head, float(raw[layer, head]), float(weighted[layer, head]))
        for layer in range(raw.shape[0])
        for head in range(raw.shape[1])
    ]


def all_sinks(
    explained: ValueWeighted, source_pieces: Sequence[str], target_input_pieces: Sequence[str]
) -> list[HeadSink]:
    """`family_sinks` of the three families, in the paper's family order."""
    keys = {"encoder_self": source_pieces, "decoder_self": target_input_pieces, "cross": source_pieces}
    return [sink for family in FAMILIES for sink in family_sinks(explained, family, keys[family])]
