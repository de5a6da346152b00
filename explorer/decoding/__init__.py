"""Decoding: greedy and beam search over any `StepScorer` (Section 6.1), with a beam trace as plain data."""

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
    "StepScorer",
    "TraceNode",
    "TraceStep",
    "beam_search",
    "greedy_search",
    "length_penalty",
    "normalized_score",
    "select_candidates",
    "stop_reason",
]
