"""Ablation meets beam search: switch heads off (explorer/model/head_mask.py) and search again. What the beam kept
with every head and without the chosen ones (prefixes pruned or added, and the scores of those kept in both), and
the BLEU of a batch either way (sacreBLEU, explorer/evaluation.py).

Prefixes are compared by their tokens: a node of one search and a node of the other are the same hypothesis when
they hold the same tokens, whatever their ids in the two traces (explorer.analysis.beam.node_tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from explorer.analysis.beam import node_tokens
from explorer.decoding.hypotheses import BeamTrace
from explorer.evaluation import Scores, corpus_scores
from explorer.inference import Translation, translate
from explorer.model import HeadMask, Transformer
from explorer.tokenizer import Tokenizer

BATCH = 16  # sentences per search of the BLEU batch, so progress moves


def kept_prefixes(trace: BeamTrace) -> dict[tuple[int, ...], float]:
    """Every prefix the search kept in its beam or finished, at any step: tokens (no BOS) -> its score
    (log-probability over the length penalty, as the search ranks them)."""
    tokens = node_tokens(trace)
    return {tokens[c.id]: c.score for step in trace.steps for c in step.candidates if c.status in ("kept", "finished")}


@dataclass(frozen=True)
class PrefixChange:
    """One prefix's score in the beam with every head (`before`) and with the heads off (`after`); None where that
    search did not keep it."""

    tokens: tuple[int, ...]
    before: float | None
    after: float | None

    @property
    def change(self) -> float | None:
        return None if self.before is None or self.after is None else self.after - self.before


@dataclass(frozen=True)
class BeamComparison:
    """One sentence searched with every head (`full`) and with `heads` off (`ablated`), both with their traces.

    dropped: prefixes the full search kept that the ablated one did not (pruned, or never reached), by step;
    added: the reverse; shared: kept by both, the largest score change first.
    """

    heads: tuple[str, ...]
    full: Translation
    ablated: Translation
    dropped: tuple[PrefixChange, ...]
    added: tuple[PrefixChange, ...]
    shared: tuple[PrefixChange, ...]


def compare_traces(full: BeamTrace, ablated: BeamTrace) -> tuple[list[PrefixChange], ...]:
    """(dropped, added, shared) between two traces of one sentence (see `BeamComparison`)."""
    before, after = kept_prefixes(full), kept_prefixes(ablated)
    dropped = [PrefixChange(p, s, None) for p, s in before.items() if p not in after]
    added = [PrefixChange(p, None, s) for p, s in after.items() if p not in before]
    shared = [PrefixChange(p, s, after[p]) for p, s in before.items() if p in after]
    key = lambda c: (len(c.tokens), c.tokens)  # noqa: E731  step by step, then token order
    return sorted(dropped, key=key), sorted(added, key=key), sorted(shared, key=lambda c: -abs(c.change or 0.0))


def compare_beams(
    model: Transformer, tokenizer: Tokenizer, sentence: str, heads: Sequence[str], *, beam_size: int, alpha: float
) -> BeamComparison:
    """Beam search on `sentence` with every head and with `heads` ('cross.2.0', 0-based) switched off (zeroed)."""
    mask = HeadMask.from_names(heads, model.config)
    (full, ablated) = (
        translate(model, tokenizer, [sentence], beam_size=beam_size, alpha=alpha, with_trace=True, head_mask=m)[0]
        for m in (None, mask)
    )
    assert full.trace is not None and ablated.trace is not None, "translate(with_trace=True) returns the traces"
    dropped, added, shared = compare_traces(full.trace, ablated.trace)
    return BeamComparison(tuple(heads), full, ablated, tuple(dropped), tuple(added), tuple(shared))


@dataclass(frozen=True)
class BleuChange:
    """The batch's scores with every head and with the heads off, and the outputs either way."""

    full: Scores
    ablated: Scores
    full_outputs: tuple[str, ...]
    ablated_outputs: tuple[str, ...]

    @property
    def change(self) -> float:
        return self.ablated.bleu - self.full.bleu


def ablation_bleu(
    model: Transformer,
    tokenizer: Tokenizer,
    sources: Sequence[str],
    references: Sequence[str],
    heads: Sequence[str],
    *,
    beam_size: int,
    alpha: float,
    progress: Callable[[int, int], None] | None = None,
) -> BleuChange:
    """Corpus BLEU of `sources` against `references`, searched with every head and with `heads` off;
    `progress(done, total)` after each batch of both searches."""
    mask = HeadMask.from_names(heads, model.config)
    full: list[str] = []
    ablated: list[str] = []
    for start in range(0, len(sources), BATCH):
        batch = list(sources[start : start + BATCH])
        for outputs, m in ((full, None), (ablated, mask)):
            outputs += [
                tr.output for tr in translate(model, tokenizer, batch, beam_size=beam_size, alpha=alpha, head_mask=m)
            ]
        if progress is not None:
            progress(len(full), len(sources))
    return BleuChange(corpus_scores(full, references), corpus_scores(ablated, references), tuple(full), tuple(ablated))
