"""Attention is blind to word order (Section 3.5): the encoder run on a sentence and on the same sentence with two
words swapped, with and without the positional encoding.

Without positional encoding every encoder layer is permutation-equivariant: permute the input tokens and the
outputs come out permuted the same way, and each attention map is permuted on both axes (A' = P A Pᵀ). The
decoder's attention over the encoder's output is a weighted sum, blind to the order of its keys, so the
translation does not change either. With the positional encoding added, the same tokens at other places are
other vectors: the numbers and the translations differ.

`word_order(model, tokenizer, original, swapped)` runs the four encoder passes (two sentences × with/without
positions) and a greedy translation from each, and measures how far the swapped run is from the permuted
original run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.inference import encode_sources
from explorer.model.transformer import EncoderOutput, Transformer
from explorer.tokenizer import Tokenizer

DEFAULT_PAIR = ("A dog bites a man.", "A man bites a dog.")
# The reviews' Korean example ("I eat rice" / "rice, I eat"): shown as text, the model reads English.
KOREAN_PAIR = ("나는 밥을 먹는다", "밥을 나는 먹는다")
MAX_EXTRA_TOKENS = 50  # Section 6.1: output length limit = input length + 50


@dataclass(frozen=True)
class EncoderRun:
    """One sentence through the encoder, positional encoding on or off."""

    attention: np.ndarray  # (layers, heads, n, n) encoder self-attention, rows are queries
    memory: np.ndarray  # (n, d_model) the encoder's output
    translation: str  # greedy, decoded from this memory (the decoder keeps its own positions)


@dataclass(frozen=True)
class WordOrder:
    original: str
    swapped: str
    original_pieces: list[str]
    swapped_pieces: list[str]
    # swapped_pieces[i] == original_pieces[permutation[i]]; None when the two are not the same pieces reordered.
    permutation: tuple[int, ...] | None
    with_pe: tuple[EncoderRun, EncoderRun]  # (original, swapped)
    without_pe: tuple[EncoderRun, EncoderRun]

    def difference(self, positions: bool) -> float:
        """Largest |swapped run - permuted original run| over the encoder's output and every attention weight.
        About float32 rounding (1e-6) without positions; of order one with them."""
        if self.permutation is None:
            raise ValueError("the swapped sentence is not a reordering of the original's pieces")
        first, second = self.with_pe if positions else self.without_pe
        p = np.asarray(self.permutation)
        memory = np.abs(second.memory - first.memory[p]).max()
        attention = np.abs(second.attention - first.attention[:, :, p][:, :, :, p]).max()
        return float(max(memory, attention))


def piece_permutation(original: list[int], swapped: list[int]) -> tuple[int, ...] | None:
    """The order that turns `original` into `swapped` (swapped[i] == original[perm[i]]), or None if the two
    are not the same multiset. Repeated ids are matched left to right: equal tokens are equal vectors without
    positions, so any matching of them gives the same numbers."""
    if sorted(original) != sorted(swapped):
        return None
    unused: dict[int, list[int]] = {}
    for index, token in enumerate(original):
        unused.setdefault(token, []).append(index)
    return tuple(unused[token].pop(0) for token in swapped)


def _encode(model: Transformer, src: torch.Tensor, positions: bool) -> EncoderOutput:
    """The encoder's forward pass with the positional encoding optionally left out; the same layers, in eval
    mode, so with positions it is `Transformer.encode`'s computation."""
    n = src.shape[1]
    x = model.embedding(src) * model.embedding_scale
    if positions:
        x = x + model.positional_table("source")[:n].to(x.dtype)
    mask = (src != model.config.pad_id).view(1, 1, 1, n)
    weights = []
    for layer in model.encoder_layers:
        out = layer(x, mask, need_weights=True)
        x = out.hidden
        weights.append(out.self_weights)
    return EncoderOutput(model.encoder_norm(x), mask, torch.stack(weights, dim=1))


def _greedy(model: Transformer, tokenizer: Tokenizer, encoded: EncoderOutput) -> str:
    config = model.config
    cache = model.start_decoding(encoded)
    last = torch.tensor([config.bos_id], device=encoded.memory.device)
    out: list[int] = []
    limit = config.output_limit(encoded.memory.shape[1], MAX_EXTRA_TOKENS)
    for _ in range(limit):
        log_probs, cache = model.decode_step(last, cache)
        token = int(log_probs[0].argmax())
        if token == config.eos_id:
            break
        out.append(token)
        last = torch.tensor([token], device=encoded.memory.device)
    return tokenizer.decode(out)


@torch.inference_mode()
def _run(model: Transformer, tokenizer: Tokenizer, ids: list[int], positions: bool) -> EncoderRun:
    device = next(model.parameters()).device
    encoded = _encode(model, torch.tensor([ids], device=device), positions)
    assert encoded.self_weights is not None, "the encoder ran with need_weights=True"
    return EncoderRun(
        encoded.self_weights[0].float().cpu().numpy(),
        encoded.memory[0].float().cpu().numpy(),
        _greedy(model, tokenizer, encoded),
    )


def word_order(model: Transformer, tokenizer: Tokenizer, original: str, swapped: str) -> WordOrder:
    """Both sentences through the encoder with and without positional encoding (model in eval mode)."""
    if model.training:
        raise ValueError("word_order needs the model in eval mode: dropout would make the runs differ")
    config = model.config
    (first, second), _ = encode_sources(tokenizer, [original, swapped], config.max_len, config.eos_id)
    return WordOrder(
        original,
        swapped,
        tokenizer.pieces(first),
        tokenizer.pieces(second),
        piece_permutation(first, second),
        (_run(model, tokenizer, first, True), _run(model, tokenizer, second, True)),
        (_run(model, tokenizer, first, False), _run(model, tokenizer, second, False)),
    )
