"""Decoding: greedy and beam search over any `StepScorer` (Section 6.1), with a beam trace as plain data, and
repeated phrases: finding them and the no-repeat-n-gram constraint."""

from explorer.decoding.repetition import (
    Repeat,
    ban_repeated_ngrams,
    is_repetitive,
    loop_unit,
    output_loop,
    repeated_ngram,
)
from explorer.decoding.search import (
    BeamResult,
    BeamTrace,
    Candidate,
    Hypothesis,
    StepScorer,
    TraceNode,
    TraceStep,
    beam_search,
    greedy_search,
    length_penalty,
    normalized_score,
    select_candidates,
    stop_reason,
)

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
