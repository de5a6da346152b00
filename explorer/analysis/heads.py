"""Numbers that describe what an attention head does, for captions under the figures.

Section 6 / Figures 3-5 of the paper show heads that learned distinct, interpretable behaviour
(attending to the previous word, to the end of the sentence, to related words). These helpers put a
number and a short name on such patterns. Weights are attention probabilities with rows summing to one;
slice off padding before calling, since padded rows and columns would dilute every statistic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.i18n import translate

_EPS = 1e-12

# A head is named after a positional pattern when at least this share of its attention follows it.
PATTERN_THRESHOLD = 0.5
# ... and called "broad" when its rows are this close to uniform (entropy / log(k)).
BROAD_THRESHOLD = 0.85


def head_entropy(weights: np.ndarray) -> np.ndarray:
    """Mean row entropy in nats: (..., q, k) -> (...). 0 = one-hot rows, log(k) = uniform rows."""
    w = np.asarray(weights, dtype=np.float64)
    assert w.ndim >= 2, f"expected weights (..., q, k), got shape {w.shape}"
    row_entropy = -(w * np.log(np.clip(w, _EPS, None))).sum(axis=-1)  # (..., q)
    return row_entropy.mean(axis=-1)


def mean_attention_distance(weights: np.ndarray) -> np.ndarray:
    """Expected |query position - key position|, averaged over queries: (..., q, k) -> (...).

    Meaningful for self-attention, where queries and keys index the same sequence. For cross-attention
    it measures how far from the diagonal (monotone alignment) the head looks.
    """
    w = np.asarray(weights, dtype=np.float64)
    assert w.ndim >= 2, f"expected weights (..., q, k), got shape {w.shape}"
    q, k = w.shape[-2:]
    distance = np.abs(np.arange(q)[:, None] - np.arange(k)[None, :])  # (q, k)
    return (w * distance).sum(axis=-1).mean(axis=-1)


def _offset_mass(w: np.ndarray, offset: int) -> float:
    """Mean over queries i (that have key i+offset) of w[i, i+offset]; w is (q, k)."""
    diag = np.diagonal(w, offset=offset)
    return float(diag.mean()) if diag.size else 0.0


def _pattern(w: np.ndarray, entropy: float) -> tuple[str, float]:
    """Name the dominant positional pattern of one head's (q, k) weights, with its share of the mass."""
    q, k = w.shape
    candidates = {
        "first token": float(w[:, 0].mean()),
        "last token": float(w[:, -1].mean()) if k > 1 else 0.0,
    }
    if q == k and q > 1:  # self-attention: offsets are meaningful
        candidates["diagonal"] = _offset_mass(w, 0)
        candidates["previous token"] = _offset_mass(w, -1)
        candidates["next token"] = _offset_mass(w, 1)
    name, share = max(candidates.items(), key=lambda item: item[1])
    if share >= PATTERN_THRESHOLD:
        return name, share
    if k > 1 and entropy / np.log(k) >= BROAD_THRESHOLD:
        return "broad", share
    return "content", share


# Whole sentences as catalogue messages (explorer/locale/ko/LC_MESSAGES/analysis.po): word order differs in Korean.
_CAPTIONS = {
    "first token": "mostly attends to the first token ({share} of its attention)",
    "last token": "mostly attends to the last token ({share} of its attention)",
    "diagonal": "mostly attends to itself ({share} of its attention)",
    "previous token": "mostly attends to the previous token ({share} of its attention)",
    "next token": "mostly attends to the next token ({share} of its attention)",
    "broad": "spreads its attention almost evenly",
    "content": "attends by content (mean distance {distance} tokens)",
}


def head_summary(weights: np.ndarray, lang: str = "en") -> list[dict[str, Any]]:
    """One dict per (layer, head) of weights (L, H, q, k), in layer-major order.

    Keys: layer, head (1-based, as in the figures' "Layer 1", "Head 1"), entropy (nats, mean over
    queries), mean_distance (positions), max_weight (mean over queries of the row maximum: how peaked),
    pattern ("diagonal", "previous token", "next token", "first token", "last token", "broad" or
    "content"), pattern_share (mean weight on that pattern's position), behaviour (what the head does, in
    `lang`) and caption (the same sentence naming the layer and head).
    """
    w = np.asarray(weights, dtype=np.float64)
    assert w.ndim == 4, f"expected weights (layers, heads, q, k), got shape {w.shape}"
    entropy = head_entropy(w)  # (L, H)
    distance = mean_attention_distance(w)  # (L, H)
    peak = w.max(axis=-1).mean(axis=-1)  # (L, H)
    summary = []
    for layer in range(w.shape[0]):
        for head in range(w.shape[1]):
            ent = float(entropy[layer, head])
            pattern, share = _pattern(w[layer, head], ent)
            behaviour = translate(
                _CAPTIONS[pattern], lang, share=f"{share:.0%}", distance=f"{distance[layer, head]:.1f}"
            )
            summary.append(
                dict(
                    layer=layer + 1,
                    head=head + 1,
                    entropy=ent,
                    mean_distance=float(distance[layer, head]),
                    max_weight=float(peak[layer, head]),
                    pattern=pattern,
                    pattern_share=share,
                    behaviour=behaviour,
                    caption=translate(
                        "Layer {layer}, head {head} {behaviour}.",
                        lang,
                        layer=layer + 1,
                        head=head + 1,
                        behaviour=behaviour,
                    ),
                )
            )
    return summary
