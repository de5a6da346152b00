"""Decoding: greedy and beam search over any `StepScorer` (Section 6.1), with a beam trace as plain data, and
repeated phrases: finding them and the no-repeat-n-gram constraint.

- `search`: the greedy and beam loops over a `StepScorer`'s rows.
- `policy`: the length penalty, which continuations a step keeps, when a sentence stops.
- `candidates`: a step's top 2k continuations per sentence, ranked.
- `hypotheses`: what comes back, as frozen plain data (`Hypothesis`, `BeamTrace`).
- `top_k`, `repetition`: the ranking kernels; repeated n-grams and the no-repeat constraint.
"""

from explorer.decoding.hypotheses import BeamResult, BeamTrace, Candidate, Hypothesis, TraceNode, TraceStep
from explorer.decoding.policy import length_penalty, normalized_score, select_candidates, stop_reason
from explorer.decoding.repetition import (
    Repeat,
    ban_repeated_ngrams,
    is_repetitive,
    loop_unit,
    output_loop,
    repeated_ngram,
)
from explorer.decoding.search import StepScorer, beam_search, greedy_search

__all__ = [
    "BeamResult",
    "BeamTrace",
    "Candidate",
    "Hypothesis",
    "Repeat",
    "StepScorer",
    "TraceNode",
    "TraceStep",
    "ban_repeated_ngrams",
    "beam_search",
    "greedy_search",
    "is_repetitive",
    "length_penalty",
    "loop_unit",
    "normalized_score",
    "output_loop",
    "repeated_ngram",
    "select_candidates",
    "stop_reason",
]
