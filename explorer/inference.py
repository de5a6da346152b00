"""Translate sentences with a trained model: batching, greedy/beam search over the key/value cache, and the
attention of every result as data.

Label conventions for the attention of a `Translation` (rows are queries, columns are keys):
- encoder_self: source_pieces × source_pieces
- decoder_self: target_input_pieces × target_input_pieces   ("<s> y1 … y(n-1)": what the decoder reads)
- cross:        target_output_pieces × source_pieces        ("y1 … yn", ending in </s>: the token each row produces)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypedDict, TypeVar

import torch

from explorer.decoding.hypotheses import BeamTrace, Hypothesis
from explorer.decoding.search import beam_search, greedy_search
from explorer.fastpath.packed_cache import PackedCache
from explorer.fastpath.packed_decoding import PackedDecoder, packed_decoder, supports_packed
from explorer.fastpath.packed_encoding import packed_encoder
from explorer.fastpath.packing import weight_versions
from explorer.model import DecoderCache, HeadMask, SentenceAttention, Transformer
from explorer.tokenizer import Tokenizer, unknown_share

EXTRA_OUTPUT_TOKENS = 50  # Section 6.1: maximum output length = input length + 50
# Half of a sentence's pieces unknown: a name or a symbol the corpus lacked is one piece of many; a sentence in
# another script is nearly all unknown.
MOSTLY_UNKNOWN = 0.5


class DecodeOptions(TypedDict, total=False):
    """The keyword options of `translate` that choose what a result holds: the names callers pass through (the
    app's shared result cache keys on them, ui/model_cache.py)."""

    beam_size: int
    alpha: float
    n_best: int
    with_attention: bool
    with_trace: bool
    max_extra_tokens: int
    no_repeat_ngram: int | None


@dataclass(frozen=True)
class Translation:
    source: str
    output: str
    source_ids: list[int]  # including the final EOS the encoder reads
    output_ids: list[int]  # generated ids, including EOS when the hypothesis finished
    source_pieces: list[str]
    target_input_pieces: list[str]
    target_output_pieces: list[str]
    score: float  # length-normalised log-probability (Section 6.1 length penalty)
    log_prob: float
    finished: bool
    truncated: bool  # the source was cut to the model's maximum length
    attention: SentenceAttention | None = None
    nbest: list[Hypothesis] = field(default_factory=list)
    trace: BeamTrace | None = None

    @property
    def unknown_share(self) -> float:
        """Share of the source's text pieces unknown to the model's vocabulary (explorer.tokenizer.unknown_share);
        at MOSTLY_UNKNOWN or above the input is probably in a language the model does not read."""
        return unknown_share(self.source_pieces)

    @property
    def mostly_unknown(self) -> bool:
        return self.unknown_share >= MOSTLY_UNKNOWN


class NoTranslationError(ValueError):
    """The search ended without any output for a sentence: the model gave no next token a finite score
    (weights or activations that are NaN or infinite). The message names the sentence."""


def _checked_best(hypotheses: Sequence[Hypothesis], sentence: str) -> Hypothesis:
    """The best hypothesis, or NoTranslationError where there is none or its score is not a number."""
    if not hypotheses or math.isnan(hypotheses[0].log_prob):
        raise NoTranslationError(
            f"the model found no translation for {sentence[:60]!r}: it gave no next token a finite "
            "probability (are its weights NaN or infinite?)"
        )
    return hypotheses[0]


CacheT = TypeVar("CacheT", DecoderCache, PackedCache)


class _CachedScorer(Generic[CacheT]):
    """A `StepScorer` over a key/value cache: each step decodes the last tokens on the cache's device and
    keeps the grown cache; `reorder` keeps the cache rows the search keeps."""

    cache: CacheT
    head_mask: HeadMask | None
    banned: int | None = None  # a token never produced (an imported model's `<pad>`, ModelConfig.ban_pad)

    def _decode(self, last_tokens: torch.Tensor) -> tuple[torch.Tensor, CacheT]:
        raise NotImplementedError

    def step(self, last_tokens: torch.Tensor, step: int) -> torch.Tensor:
        # The search keeps its tokens on the CPU; the cache may live on the GPU.
        log_probs, self.cache = self._decode(last_tokens.to(self.cache.src_mask.device))
        if self.banned is not None:
            # After the softmax, as transformers' `bad_words_ids` does in beam search: the other tokens keep their
            # log-probabilities (no renormalisation), so the scores match `generate`'s.
            log_probs[:, self.banned] = -math.inf
        return log_probs

    def reorder(self, rows: torch.Tensor) -> None:
        self.cache = self.cache.select(rows.to(self.cache.src_mask.device))


class ModelScorer(_CachedScorer[DecoderCache]):
    """The `StepScorer` the search functions drive: one `decode_step` per call, cache reordered by row."""

    def __init__(self, model: Transformer, cache: DecoderCache, head_mask: HeadMask | None = None) -> None:
        self.model, self.cache, self.head_mask = model, cache, head_mask

    def _decode(self, last_tokens: torch.Tensor) -> tuple[torch.Tensor, DecoderCache]:
        return self.model.decode_step(last_tokens, self.cache, head_mask=self.head_mask)


class PackedScorer(_CachedScorer[PackedCache]):
    """The same steps as `ModelScorer` through the packed decoder (fewer operations, the same head mask)."""

    def __init__(self, decoder: PackedDecoder, cache: PackedCache, head_mask: HeadMask | None = None) -> None:
        self.decoder, self.cache, self.head_mask = decoder, cache, head_mask

    def _decode(self, last_tokens: torch.Tensor) -> tuple[torch.Tensor, PackedCache]:
        return self.decoder.step(last_tokens, self.cache, head_mask=self.head_mask)

    def greedy_one(self, bos_id: int, eos_id: int, max_len: int) -> tuple[list[int], list[float]] | None:
        """The whole greedy search of this one sentence in one call where the packed decoder can make it
        (`PackedDecoder.greedy_one`), leaving the cache as the steps would; None: the search steps."""
        found = self.decoder.greedy_one(self.cache, bos_id, eos_id, max_len, head_mask=self.head_mask)
        if found is None:
            return None
        tokens, log_probs, self.cache = found
        return tokens, log_probs

    def beam_one(
        self, bos_id: int, eos_id: int, max_len: int, beam_size: int
    ) -> list[tuple[list[int], list[float], float, bool]] | None:
        """The whole beam search of this one sentence in one call where the packed decoder can make it
        (`PackedDecoder.beam_one`): its ended hypotheses; None: the search steps. The cache is left as it was."""
        return self.decoder.beam_one(self.cache, bos_id, eos_id, max_len, beam_size, head_mask=self.head_mask)


def scorer_for(model: Transformer, src: torch.Tensor, head_mask: HeadMask | None = None) -> ModelScorer | PackedScorer:
    """Encode `src` (batch, src) and return the scorer that decodes it: packed whenever the model allows,
    with heads masked or not (a masked re-decode costs what the plain one does)."""
    scorer: ModelScorer | PackedScorer
    if supports_packed(model) and not model.training:
        versions = weight_versions(model)  # read once for both: about 10 µs of every translated sentence
        encoded = packed_encoder(model, versions).encode(src, head_mask)
        decoder = packed_decoder(model, versions)
        scorer = PackedScorer(decoder, decoder.start(encoded), head_mask)
    else:
        encoded = model.encode(src, head_mask=head_mask)
        scorer = ModelScorer(model, model.start_decoding(encoded), head_mask)
    scorer.banned = model.config.pad_id if model.config.ban_pad else None
    return scorer


def encode_sources(
    tokenizer: Tokenizer, sentences: Sequence[str], max_len: int, eos_id: int
) -> tuple[list[list[int]], list[bool]]:
    """Token ids + EOS per sentence, cut to `max_len` positions; the flags say which were cut."""
    ids, truncated = [], []
    for sentence in sentences:
        pieces = tokenizer.encode(sentence)
        truncated.append(len(pieces) + 1 > max_len)
        ids.append(pieces[: max_len - 1] + [eos_id])
    return ids, truncated


def pad(sequences: Sequence[Sequence[int]], pad_id: int, device: torch.device) -> torch.Tensor:
    width = max(len(s) for s in sequences)
    out = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    for row, seq in enumerate(sequences):
        out[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out.to(device)


@torch.inference_mode()
def attention_for(
    model: Transformer,
    source_ids: Sequence[Sequence[int]],
    output_ids: Sequence[Sequence[int]],
    head_mask: HeadMask | None = None,
) -> list[SentenceAttention]:
    """Teacher-forced pass over finished outputs, returning each pair's attention without padding."""
    config = model.config
    device = next(model.parameters()).device
    # Row t reads <s> y1 … y(t-1) and produces y_t, so the input is the output shifted right by one.
    target_in = [([config.bos_id] + list(out[:-1]))[: config.max_len] for out in output_ids]
    maps = model.attention_maps(
        pad(source_ids, config.pad_id, device), pad(target_in, config.pad_id, device), head_mask=head_mask
    )
    return [maps.sentence(i, len(s), len(t)) for i, (s, t) in enumerate(zip(source_ids, target_in, strict=True))]


@torch.inference_mode()
def translate(
    model: Transformer,
    tokenizer: Tokenizer,
    sentences: Sequence[str],
    *,
    beam_size: int = 1,
    alpha: float = 0.6,
    n_best: int = 1,
    with_attention: bool = False,
    with_trace: bool = False,
    batch_size: int = 32,
    max_extra_tokens: int = EXTRA_OUTPUT_TOKENS,
    progress: Callable[[int, int], None] | None = None,
    head_mask: HeadMask | None = None,
    no_repeat_ngram: int | None = None,
) -> list[Translation]:
    """Translate `sentences`; greedy when beam_size == 1. Order of results = order of inputs.

    head_mask switches attention heads off for the search and the attention maps alike (the Heads page, `explorer
    heads`, head importance); it is checked against the model's shape first (HeadNameError for a mask made for
    another model), and a mask with no head off is no mask: exactly the unmasked outputs. no_repeat_ngram = n
    forbids the search to repeat any n pieces in a row within an output (explorer/decoding/repetition.py).
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be >= 1, got {beam_size}")
    config = model.config
    if head_mask is not None:
        head_mask = None if head_mask.is_empty else head_mask.check(config)
    device = next(model.parameters()).device
    source_ids, truncated = encode_sources(tokenizer, sentences, config.max_len, config.eos_id)
    # Sort by length so each batch pads little; results are put back in input order.
    order = sorted(range(len(sentences)), key=lambda i: len(source_ids[i]))
    results: list[Translation | None] = [None] * len(sentences)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        ids = [source_ids[i] for i in chunk]
        scorer = scorer_for(model, pad(ids, config.pad_id, device), head_mask)
        limits = [config.output_limit(len(s), max_extra_tokens) for s in ids]
        if beam_size == 1 and not with_trace:
            found_greedy = greedy_search(
                scorer,
                len(chunk),
                config.bos_id,
                config.eos_id,
                limits,
                no_repeat_ngram=no_repeat_ngram,
                length_normalisation=config.length_normalisation,
            )
            best = [[h] for h in found_greedy]
            traces: list[BeamTrace | None] = [None] * len(chunk)
        else:
            # One row per sentence to start; the search grows them into beams through `reorder`.
            found = beam_search(
                scorer,
                len(chunk),
                beam_size,
                config.bos_id,
                config.eos_id,
                limits,
                alpha=alpha,
                n_best=max(n_best, 1),
                trace=with_trace,
                no_repeat_ngram=no_repeat_ngram,
                length_normalisation=config.length_normalisation,
            )
            best = [r.hypotheses for r in found]
            traces = [r.trace for r in found]
        attentions = (
            attention_for(
                model,
                ids,
                [list(_checked_best(h, sentences[i]).tokens) for h, i in zip(best, chunk, strict=True)],
                head_mask,
            )
            if with_attention
            else [None] * len(chunk)
        )
        for position, index in enumerate(chunk):
            top = _checked_best(best[position], sentences[index])
            tokens = list(top.tokens)
            body = tokens[:-1] if top.finished and tokens and tokens[-1] == config.eos_id else tokens
            results[index] = Translation(
                source=sentences[index],
                output=tokenizer.decode(body),
                source_ids=ids[position],
                output_ids=tokens,
                source_pieces=tokenizer.pieces(ids[position]),
                target_input_pieces=tokenizer.target_pieces([config.bos_id] + tokens[:-1]),
                target_output_pieces=tokenizer.target_pieces(tokens),
                score=top.score,
                log_prob=top.log_prob,
                finished=top.finished,
                truncated=truncated[index],
                attention=attentions[position],
                nbest=list(best[position][:n_best]),
                trace=traces[position],
            )
        if progress is not None:
            progress(min(start + batch_size, len(order)), len(order))
    return [r for r in results if r is not None]
