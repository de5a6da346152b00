"""What the search hands back, as plain frozen data: hypotheses, and the beam trace a page draws step by step
(`dataclasses.asdict` -> JSON), plus the live hypothesis the beam search carries between steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.decoding.policy import Status, normalized_score


@dataclass(frozen=True)
class Hypothesis:
    """One output sequence: generated ids (no BOS; EOS last when finished) and its scores."""

    tokens: tuple[int, ...]
    log_prob: float  # sum of token_log_probs
    token_log_probs: tuple[float, ...]
    score: float  # log_prob / length_penalty(len(tokens), alpha)
    finished: bool  # ended with EOS (False: cut at max_len)


@dataclass(frozen=True)
class TraceNode:
    """A live hypothesis in the beam trace; the root (BOS) has id 0 and no parent."""

    id: int
    parent_id: int | None
    token: int
    log_prob: float
    score: float
    tokens: tuple[int, ...]


@dataclass(frozen=True)
class Candidate:
    """A continuation considered at one step: live hypothesis `parent` (index into that step's
    `live`) extended with `token`. Every candidate has its own id; a kept candidate reappears with the
    same id among the next step's live nodes."""

    parent: int
    token: int
    token_log_prob: float
    log_prob: float  # cumulative
    score: float  # log_prob / lp(length of the extended hypothesis)
    status: Status
    id: int
    parent_id: int


@dataclass(frozen=True)
class TraceStep:
    """Step t: the live hypotheses going in (t tokens each) and the top-2k continuations, best first."""

    step: int
    live: list[TraceNode]
    candidates: list[Candidate]


@dataclass(frozen=True)
class BeamTrace:
    """The whole search of one sentence, as plain data (`dataclasses.asdict` -> JSON)."""

    steps: list[TraceStep]
    finished: list[Hypothesis]  # every completed hypothesis (and those cut at max_len), best first
    beam_size: int
    alpha: float
    max_len: int
    stop_reason: str = ""
    length_normalisation: str = "gnmt"  # the form of lp (explorer.decoding.policy.length_penalty)


@dataclass(frozen=True)
class BeamResult:
    # n-best, best first: finished ones before those cut at max_len; empty when no continuation had a finite
    # score (a model whose outputs are NaN): the caller says so (explorer.inference.NoTranslationError)
    hypotheses: list[Hypothesis]
    trace: BeamTrace | None


def hypothesis(
    tokens: Sequence[int], token_lps: Sequence[float], total: float, finished: bool, alpha: float, form: str = "gnmt"
) -> Hypothesis:
    """A `Hypothesis` with its score: `total` is the sum of `token_lps`, as the search accumulated it."""
    score = normalized_score(total, len(tokens), alpha, form)
    return Hypothesis(tuple(tokens), total, tuple(token_lps), score, finished)


@dataclass
class LiveHypothesis:
    """A live hypothesis of one sentence in the beam search, with the trace node it is drawn as."""

    tokens: tuple[int, ...]
    token_log_probs: tuple[float, ...]
    log_prob: float
    node_id: int
    parent_id: int | None
