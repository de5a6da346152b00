"""Greedy and beam search over any next-token scorer, with the length penalty of the paper's Section 6.1.

The paper decodes with "beam search with a beam size of 4 and length penalty α = 0.6" (Section 6.1,
citing Wu et al. 2016, GNMT), and sets the maximum output length to input length + 50, "but terminate early
when possible". This module is that search, written against a small protocol (`StepScorer`) instead of the
model, so it can be tested against hand-made probability tables and explained step by step.

Rows. The scorer owns the per-row decoding state (the model's key/value cache and encoder memory). It
starts with one row per sentence, holding the BOS prefix. After every step the search calls
`scorer.reorder(rows)` with, for each new row, the index of the row it continues. Live rows are laid out by
sentence, then by beam rank: while every sentence has k live hypotheses, row = sentence * k + beam. Rows
of sentences that are done are dropped by that same reorder call, so the scorer never computes rows nobody
reads; at the first step each sentence has a single live row, which is the usual "only beam 0 is live,
the others are -inf" start without the duplicate rows.

What a step keeps and when a sentence stops is the search policy, its own small functions in
`explorer.decoding.policy`; the ranking of a step's candidates is `explorer.decoding.candidates`; what comes back
is the plain data of `explorer.decoding.hypotheses`.

No-repeat constraint (off by default: ``no_repeat_ngram=None``): before each step's selection, every live
row's log-probabilities are masked so that no token completes an n-gram the row already holds
(`explorer.decoding.repetition.ban_repeated_ngrams`). Left unset, the search does not touch the scores at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch

from explorer.decoding.candidates import Ranked, top_candidates
from explorer.decoding.hypotheses import (
    BeamResult,
    BeamTrace,
    Candidate,
    Hypothesis,
    LiveHypothesis,
    TraceNode,
    TraceStep,
    hypothesis,
)
from explorer.decoding.policy import FINISHED, KEPT, STOP_MAX_LEN, normalized_score, select_candidates, stop_reason
from explorer.decoding.repetition import ban_repeated_ngrams


class OneCallGreedy(Protocol):
    """What a `StepScorer` may add: the greedy search of its one sentence in one call, the tokens and
    log-probabilities this module's own loop would find (`explorer.fastpath.scripted_decoding`), or None where it
    cannot, and the search steps as usual."""

    def greedy_one(self, bos_id: int, eos_id: int, max_len: int) -> tuple[list[int], list[float]] | None: ...


class OneCallBeam(Protocol):
    """What a `StepScorer` may add: the beam search of its one sentence in one call (early stopping, no trace, no
    n-gram ban), every ended hypothesis as (tokens, token log-probabilities, total, finished) in the order this
    module's own loop would end them (`explorer.fastpath.scripted_decoding.beam_loop`), or None where it cannot."""

    def beam_one(
        self, bos_id: int, eos_id: int, max_len: int, beam_size: int
    ) -> list[tuple[list[int], list[float], float, bool]] | None: ...


class StepScorer(Protocol):
    """One decoder step over N live rows, with state the search can reorder.

    The scorer starts with one row per sentence (the BOS prefix). Step t feeds the token at target
    position t (BOS at t = 0) and predicts position t + 1.
    """

    def step(self, last_tokens: torch.Tensor, step: int) -> torch.Tensor:
        """last_tokens (N,) long -> log-probabilities (N, vocab) float for the next token of each row."""
        ...

    def reorder(self, rows: torch.Tensor) -> None:
        """Keep the state of `rows` (M,) long, indices into the current N rows, in that order.

        Rows may repeat (a hypothesis with several surviving continuations) and M may be smaller than N
        (pruned hypotheses, finished sentences). A KV cache implements this with `index_select(0, rows)`.
        """
        ...


def greedy_search(
    scorer: StepScorer,
    batch_size: int,
    bos_id: int,
    eos_id: int,
    max_len: int | Sequence[int],
    alpha: float = 0.6,
    no_repeat_ngram: int | None = None,
    length_normalisation: str = "gnmt",
) -> list[Hypothesis]:
    """Most probable next token at every step, for a batch; one hypothesis per sentence.

    `alpha` and `length_normalisation` only set the reported `score`. Sentences that end are dropped from the
    scorer's rows. `no_repeat_ngram` = n forbids any token that would repeat an n-gram of the row's own output.
    """
    _check_no_repeat(no_repeat_ngram)
    score = _Score(alpha, length_normalisation)
    if batch_size == 1 and no_repeat_ngram is None:
        return [_greedy_one(scorer, bos_id, eos_id, _max_lens(max_len, 1)[0], score)]
    return _greedy_rows(scorer, batch_size, bos_id, eos_id, max_len, score, no_repeat_ngram)


@dataclass(frozen=True)
class _Score:
    """How a hypothesis is scored: the length penalty's α and form (explorer.decoding.policy.length_penalty)."""

    alpha: float
    form: str


def _greedy_rows(
    scorer: StepScorer,
    batch_size: int,
    bos_id: int,
    eos_id: int,
    max_len: int | Sequence[int],
    score: _Score,
    no_repeat_ngram: int | None,
) -> list[Hypothesis]:
    """`greedy_search` over all live rows at once, with tensor operations."""
    limits = torch.tensor(_max_lens(max_len, batch_size), dtype=torch.long)  # (B,)
    # A step's work over all live rows at once, in as few tensor operations as possible (a step of one sentence
    # costs about 0.7 ms, and each small operation a few µs): every step's (sentences, tokens, log-probs) is kept
    # as it came, and each sentence's hypothesis is read out of them once, at the end.
    history: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
    tokens = torch.zeros((batch_size, int(limits.max())), dtype=torch.long) if no_repeat_ngram is not None else None
    active = torch.arange(batch_size)  # sentence of each scorer row
    active_limits = limits
    last = torch.full((batch_size,), bos_id, dtype=torch.long)
    step = 0
    while active.numel():
        log_probs = _checked(scorer.step(last, step), active.numel())
        if tokens is not None and no_repeat_ngram is not None:
            log_probs = ban_repeated_ngrams(log_probs, tokens[active, :step], no_repeat_ngram)
        best_lp, best_token = log_probs.max(dim=-1)  # (N,), (N,)
        best_lp, best_token = best_lp.cpu(), best_token.cpu()
        if tokens is not None:
            tokens[active, step] = best_token
        history.append((active, best_token, best_lp))
        done = (best_token == eos_id) | (active_limits <= step + 1)
        if bool(done.any()):
            keep = (~done).nonzero().squeeze(1)
            if keep.numel():
                scorer.reorder(keep)
            active, last, active_limits = active[keep], best_token[keep], active_limits[keep]
        else:
            last = best_token
        step += 1
    outputs: list[list[int]] = [[] for _ in range(batch_size)]
    log_probs_of: list[list[float]] = [[] for _ in range(batch_size)]
    for sentences, found, found_lps in history:
        for sentence, token, lp in zip(sentences.tolist(), found.tolist(), found_lps.tolist(), strict=True):
            outputs[sentence].append(token)
            log_probs_of[sentence].append(lp)  # a float32 maximum, exactly as a Python float
    return [_greedy_hypothesis(out, lps, eos_id, score) for out, lps in zip(outputs, log_probs_of, strict=True)]


def _greedy_one(scorer: StepScorer, bos_id: int, eos_id: int, max_len: int, score: _Score) -> Hypothesis:
    """`greedy_search` of one sentence (a page decoding one typed sentence greedily): the same tokens,
    log-probs and sum as `_greedy_rows`, with the bookkeeping in Python numbers instead of tensor operations
    over rows (those took about 55 µs a step, against 0.6 ms for the step itself)."""
    whole = getattr(scorer, "greedy_one", None)  # a scorer that can run the whole loop itself (OneCallGreedy)
    found = whole(bos_id, eos_id, max_len) if whole is not None else None
    if found is not None:
        return _greedy_hypothesis(found[0], found[1], eos_id, score)
    tokens: list[int] = []
    lps: list[float] = []
    last = torch.tensor([bos_id], dtype=torch.long)
    for step in range(max_len):
        best_lp, best_token = _checked(scorer.step(last, step), 1).max(dim=-1)  # (1,), (1,)
        tokens.append(int(best_token))
        lps.append(float(best_lp))  # a float32 maximum, exactly as a Python float
        if tokens[-1] == eos_id:
            break
        last = best_token.cpu()
    return _greedy_hypothesis(tokens, lps, eos_id, score)


def _greedy_hypothesis(tokens: list[int], lps: list[float], eos_id: int, score: _Score) -> Hypothesis:
    total = 0.0
    for lp in lps:  # summed in token order, in float64 (not sum(): from Python 3.12 it compensates)
        total += lp
    return hypothesis(tokens, lps, total, bool(tokens) and tokens[-1] == eos_id, score.alpha, score.form)


@dataclass
class _Sentence:
    """Per-sentence bookkeeping of the batched beam search."""

    max_len: int
    live: list[LiveHypothesis]
    ended: list[Hypothesis] = field(default_factory=list)  # finished, and cut at max_len
    steps: list[TraceStep] = field(default_factory=list)
    next_id: int = 1  # node 0 is the root
    reason: str = ""


@dataclass(frozen=True)
class _Settings:
    beam_size: int
    bos_id: int
    eos_id: int
    alpha: float
    early_stopping: bool
    trace: bool
    form: str = "gnmt"


def beam_search(
    scorer: StepScorer,
    batch_size: int,
    beam_size: int,
    bos_id: int,
    eos_id: int,
    max_len: int | Sequence[int],
    alpha: float = 0.6,
    n_best: int | None = None,
    trace: bool = False,
    early_stopping: bool = True,
    no_repeat_ngram: int | None = None,
    length_normalisation: str = "gnmt",
) -> list[BeamResult]:
    """Beam search with GNMT's length penalty (Section 6.1: k = 4, α = 0.6), one result per sentence.

    The scorer is called once per step on all live rows of all unfinished sentences; selection, finishing
    and stopping are per sentence (module doc). `n_best` (default `beam_size`) hypotheses come back per
    sentence, best first; with `trace=True` each result also carries the `BeamTrace`. `no_repeat_ngram` = n
    forbids, in every live row, any token that would repeat an n-gram of that hypothesis (module doc).
    `length_normalisation` is the length penalty's form: GNMT's (the paper) or "power", length^α.
    """
    _check_no_repeat(no_repeat_ngram)
    assert beam_size >= 1, f"beam_size must be >= 1, got {beam_size}"
    n_best = beam_size if n_best is None else n_best
    assert n_best >= 1, f"n_best must be >= 1, got {n_best}"
    settings = _Settings(beam_size, bos_id, eos_id, alpha, early_stopping, trace, length_normalisation)
    if batch_size == 1 and early_stopping and not trace and no_repeat_ngram is None:
        one = _beam_one(scorer, settings, _max_lens(max_len, 1)[0], n_best)
        if one is not None:
            return [one]
    sentences = [
        _Sentence(max_len=limit, live=[LiveHypothesis((), (), 0.0, node_id=0, parent_id=None)])
        for limit in _max_lens(max_len, batch_size)
    ]
    active = list(range(batch_size))  # sentences with rows in the scorer, in row order
    last = torch.full((batch_size,), bos_id, dtype=torch.long)
    step = 0
    while active:
        n_rows = sum(len(sentences[s].live) for s in active)
        log_probs = _checked(scorer.step(last, step), n_rows)  # (N, V)
        if no_repeat_ngram is not None and step >= no_repeat_ngram:
            # Every live hypothesis holds `step` tokens; rows in the scorer's order.
            history = torch.tensor([h.tokens for s in active for h in sentences[s].live], dtype=torch.long)
            log_probs = ban_repeated_ngrams(log_probs, history, no_repeat_ngram)
        ranked = top_candidates(log_probs, [sentences[s].live for s in active], beam_size)
        next_rows: list[int] = []
        next_tokens: list[int] = []
        still_active: list[int] = []
        row0 = 0
        for i, s in enumerate(active):
            sentence = sentences[s]
            n_old = len(sentence.live)
            kept = _advance(sentence, step, ranked[i], settings)
            if kept:
                still_active.append(s)
                next_rows.extend(row0 + parent for parent in kept)
                next_tokens.extend(h.tokens[-1] for h in sentence.live)
            row0 += n_old
        if still_active:
            scorer.reorder(torch.tensor(next_rows, dtype=torch.long))
        active = still_active
        last = torch.tensor(next_tokens, dtype=torch.long)
        step += 1
    return [_result(sentence, settings, n_best) for sentence in sentences]


def _beam_one(scorer: StepScorer, settings: _Settings, max_len: int, n_best: int) -> BeamResult | None:
    """`beam_search` of one sentence (a page's typed sentence, beam 4) in one call of a scorer that can make it
    (`OneCallBeam`): the same ended hypotheses, so the same n-best; None where the steps below must run. The
    search's Python bookkeeping took about 12% of such a sentence's time (3 of 27 ms, shipped model, 2-core AMD
    EPYC)."""
    whole = getattr(scorer, "beam_one", None)
    found = whole(settings.bos_id, settings.eos_id, max_len, settings.beam_size) if whole is not None else None
    if found is None:
        return None
    alpha, form = settings.alpha, settings.form
    ended = [hypothesis(tokens, lps, total, finished, alpha, form) for tokens, lps, total, finished in found]
    return _result(_Sentence(max_len=max_len, live=[], ended=ended), settings, n_best)


def _advance(sentence: _Sentence, step: int, ranked: list[Ranked], settings: _Settings) -> list[int]:
    """Apply one step to one sentence; returns the parent index of each new live hypothesis ([] = done)."""
    old_live = sentence.live
    length = step + 1
    alpha, form = settings.alpha, settings.form
    statuses = select_candidates([token for _, _, token, _ in ranked], settings.beam_size, settings.eos_id)
    new_live: list[LiveHypothesis] = []
    kept_parents: list[int] = []
    candidates: list[Candidate] = []
    for (value, parent, token, token_lp), status in zip(ranked, statuses, strict=False):
        node_id = sentence.next_id
        sentence.next_id += 1
        source = old_live[parent]
        if status == FINISHED:
            extended = source.tokens + (token,)
            sentence.ended.append(hypothesis(extended, source.token_log_probs + (token_lp,), value, True, alpha, form))
        elif status == KEPT:
            extended = source.tokens + (token,)
            new_live.append(
                LiveHypothesis(extended, source.token_log_probs + (token_lp,), value, node_id, source.node_id)
            )
            kept_parents.append(parent)
        if settings.trace:  # the trace's candidates, pruned ones included; nothing to build otherwise
            score = normalized_score(value, length, alpha, form)
            candidates.append(Candidate(parent, token, token_lp, value, score, status, node_id, source.node_id))
    if settings.trace:
        nodes = [_node(h, settings) for h in old_live]
        sentence.steps.append(TraceStep(step, nodes, candidates))
    sentence.live = new_live
    reason = stop_reason(
        [h.score for h in sentence.ended if h.finished],
        [h.log_prob for h in new_live],
        length,
        sentence.max_len,
        settings.beam_size,
        alpha,
        settings.early_stopping,
        form,
    )
    if reason is None:
        return kept_parents
    sentence.reason = reason
    if reason == STOP_MAX_LEN:
        sentence.ended.extend(hypothesis(h.tokens, h.token_log_probs, h.log_prob, False, alpha, form) for h in new_live)
    sentence.live = []
    return []


def _node(h: LiveHypothesis, settings: _Settings) -> TraceNode:
    token = h.tokens[-1] if h.tokens else settings.bos_id
    score = normalized_score(h.log_prob, len(h.tokens), settings.alpha, settings.form)
    return TraceNode(h.node_id, h.parent_id, token, h.log_prob, score, h.tokens)


def _result(sentence: _Sentence, settings: _Settings, n_best: int) -> BeamResult:
    ranked = sorted(sentence.ended, key=lambda h: (not h.finished, -h.score))
    beam_trace = None
    if settings.trace:
        beam_trace = BeamTrace(
            sentence.steps,
            ranked,
            settings.beam_size,
            settings.alpha,
            sentence.max_len,
            sentence.reason,
            settings.form,
        )
    return BeamResult(ranked[:n_best], beam_trace)


def _max_lens(max_len: int | Sequence[int], batch_size: int) -> list[int]:
    limits = [max_len] * batch_size if isinstance(max_len, int) else [int(m) for m in max_len]
    assert len(limits) == batch_size, f"expected {batch_size} max_len values, got {len(limits)}"
    assert all(m >= 1 for m in limits), f"max_len must be >= 1, got {limits}"
    return limits


def _check_no_repeat(no_repeat_ngram: int | None) -> None:
    assert no_repeat_ngram is None or no_repeat_ngram >= 1, f"no_repeat_ngram must be >= 1, got {no_repeat_ngram}"


def _checked(log_probs: torch.Tensor, n_rows: int) -> torch.Tensor:
    assert log_probs.dim() == 2 and log_probs.shape[0] == n_rows, (
        f"scorer.step must return (live rows={n_rows}, vocab) log-probabilities, got {tuple(log_probs.shape)}"
    )
    return log_probs
