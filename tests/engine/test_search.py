"""Greedy and beam search against hand-made probability tables (explorer/decoding/search.py)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable

import numpy as np
import pytest
import torch

from explorer.decoding import (
    BeamTrace,
    beam_search,
    greedy_search,
    length_penalty,
    select_candidates,
)
from explorer.decoding.policy import STOP_BEAM_FULL, STOP_MAX_LEN, STOP_NO_LIVE

EOS, BOS, A, B, C = 0, 1, 2, 3, 4
VOCAB = 5

Table = dict[tuple[int, ...], dict[int, float]]


class PrefixScorer:
    """A `StepScorer` whose state per row is (sentence, prefix), like a KV cache holds the past.

    `probs(sentence, prefix)` gives the next-token distribution; a wrong reorder shows up as wrong prefixes.
    """

    def __init__(self, probs: Callable[[int, tuple[int, ...]], np.ndarray], batch_size: int) -> None:
        self.probs = probs
        self.rows: list[tuple[int, tuple[int, ...]]] = [(s, ()) for s in range(batch_size)]
        self.reorders: list[list[int]] = []
        self.n_scored = 0

    def step(self, last_tokens: torch.Tensor, step: int) -> torch.Tensor:
        assert last_tokens.dtype == torch.long and last_tokens.shape == (len(self.rows),)
        if step == 0:
            assert last_tokens.tolist() == [BOS] * len(self.rows)
        else:
            self.rows = [(s, prefix + (t,)) for (s, prefix), t in zip(self.rows, last_tokens.tolist(), strict=True)]
        assert all(len(prefix) == step for _, prefix in self.rows)
        self.n_scored += len(self.rows)
        table = np.stack([self.probs(s, prefix) for s, prefix in self.rows]).astype(np.float32)
        return torch.from_numpy(table).log()

    def reorder(self, rows: torch.Tensor) -> None:
        assert rows.dtype == torch.long and rows.dim() == 1 and len(rows) > 0
        assert all(0 <= r < len(self.rows) for r in rows.tolist()), (rows, len(self.rows))
        self.reorders.append(rows.tolist())
        self.rows = [self.rows[r] for r in rows.tolist()]


def table_scorer(*tables: Table) -> PrefixScorer:
    """Sentence s reads tables[s]; a prefix missing from its table ends with certainty (EOS)."""

    def probs(s: int, prefix: tuple[int, ...]) -> np.ndarray:
        p = np.zeros(VOCAB)
        for token, value in tables[s].get(prefix, {EOS: 1.0}).items():
            p[token] = value
        return p

    return PrefixScorer(probs, len(tables))


def random_scorer(seed: int, batch_size: int, vocab: int = 8) -> PrefixScorer:
    """Random distributions with full support except BOS; EOS grows likelier with length."""

    def probs(s: int, prefix: tuple[int, ...]) -> np.ndarray:
        p = np.random.default_rng([seed, s, *prefix]).dirichlet(np.ones(vocab))
        p[BOS] = 0.0
        p[EOS] *= 0.4 * (1 + len(prefix))
        return p / p.sum()

    return PrefixScorer(probs, batch_size)


# Greedy takes A (.5) then can only end with .4: p = .2. Beam 2 keeps B (.4), which ends with .9: p = .36.
GREEDY_TRAP: Table = {
    (): {A: 0.5, B: 0.4, EOS: 0.1},
    (A,): {EOS: 0.4, A: 0.35, B: 0.25},
    (B,): {EOS: 0.9, A: 0.1},
}

# (EOS) finishes at step 0 with p = .3; (A, A, EOS) has p = .266 but the better length-normalized score.
LENGTH_PENALTY: Table = {
    (): {EOS: 0.3, A: 0.7},
    (A,): {A: 0.95, B: 0.05},
    (A, A): {EOS: 0.4, C: 0.6},
    (A, B): {EOS: 1.0},
    (A, A, C): {EOS: 1.0},
}


def lp(length: int, alpha: float = 0.6) -> float:
    return ((5 + length) / 6) ** alpha


def approx(x: float) -> object:
    return pytest.approx(x, rel=1e-6, abs=1e-6)


def statuses(trace: BeamTrace) -> list[list[tuple[int, str]]]:
    return [[(c.token, c.status) for c in step.candidates] for step in trace.steps]


def test_length_penalty_is_gnmt() -> None:
    assert length_penalty(1, 0.6) == 1.0
    assert length_penalty(4, 0.6) == approx(1.5**0.6)
    assert length_penalty(7, 0.0) == 1.0


def test_select_candidates_policy() -> None:
    assert select_candidates([EOS, A, B, EOS, C], beam_size=2, eos_id=EOS) == [
        "finished",
        "kept",
        "kept",
        "pruned",
        "pruned",
    ]
    assert select_candidates([A, EOS, B], beam_size=1, eos_id=EOS) == ["kept", "pruned", "pruned"]


def test_beam_finds_what_greedy_misses() -> None:
    (greedy,) = greedy_search(table_scorer(GREEDY_TRAP), 1, BOS, EOS, max_len=5)
    assert greedy.tokens == (A, EOS) and greedy.finished
    assert greedy.log_prob == approx(math.log(0.2))
    assert greedy.score == approx(math.log(0.2) / lp(2))

    (result,) = beam_search(table_scorer(GREEDY_TRAP), 1, 2, BOS, EOS, max_len=5, trace=True)
    best, second = result.hypotheses
    assert best.tokens == (B, EOS) and best.finished
    assert best.log_prob == approx(math.log(0.36))
    assert best.token_log_probs == (approx(math.log(0.4)), approx(math.log(0.9)))
    assert best.score == approx(math.log(0.36) / lp(2))
    assert second.tokens == (A, EOS) and second.score == approx(math.log(0.2) / lp(2))
    assert result.trace is not None
    # Step 0: EOS (.1) ranks third, outside the beam, so it is pruned, not finished.
    # Step 1: (B EOS) .36, (A EOS) .2 finish; (A A) .175, (A B) .125 stay live; two finished: stop.
    assert statuses(result.trace) == [
        [(A, "kept"), (B, "kept"), (EOS, "pruned")],
        [(EOS, "finished"), (EOS, "finished"), (A, "kept"), (B, "kept")],
    ]
    assert result.trace.stop_reason == STOP_BEAM_FULL


def test_length_penalty_changes_the_winner_and_early_finish_is_kept() -> None:
    short_score = math.log(0.3) / lp(1)  # -1.204
    long_score = math.log(0.7 * 0.95 * 0.4) / lp(3)  # log .266 / 1.189 = -1.114
    assert long_score > short_score and 0.266 < 0.3

    (result,) = beam_search(table_scorer(LENGTH_PENALTY), 1, 2, BOS, EOS, max_len=10, alpha=0.6, trace=True)
    assert [h.tokens for h in result.hypotheses] == [(A, A, EOS), (EOS,)]
    assert [h.score for h in result.hypotheses] == [approx(long_score), approx(short_score)]
    assert result.hypotheses[1].log_prob == approx(math.log(0.3))
    assert result.trace is not None
    assert statuses(result.trace) == [
        [(A, "kept"), (EOS, "finished")],  # (EOS) finishes at the first step
        [(A, "kept"), (B, "kept")],
        [(C, "kept"), (EOS, "finished"), (EOS, "pruned")],  # (A B EOS) .035 ranks third
    ]

    (raw,) = beam_search(table_scorer(LENGTH_PENALTY), 1, 2, BOS, EOS, max_len=10, alpha=0.0)
    assert [h.tokens for h in raw.hypotheses] == [(EOS,), (A, A, EOS)]
    assert raw.hypotheses[0].score == approx(math.log(0.3))


def test_bound_stopping_searches_on_while_a_live_hypothesis_can_win() -> None:
    # After step 2, (A A C) has log .399 = -0.919; even at max_len its bound -0.919 / lp(10) = -0.53 beats
    # the worst finished score -1.204, so the search goes on and finds (A A C EOS).
    (result,) = beam_search(table_scorer(LENGTH_PENALTY), 1, 2, BOS, EOS, max_len=10, trace=True, early_stopping=False)
    assert [h.tokens for h in result.hypotheses] == [(A, A, C, EOS), (A, A, EOS)]
    assert result.hypotheses[0].score == approx(math.log(0.399) / lp(4))
    assert result.trace is not None and result.trace.stop_reason == STOP_NO_LIVE
    assert [h.tokens for h in result.trace.finished] == [(A, A, C, EOS), (A, A, EOS), (EOS,)]


def test_max_len_finalizes_live_hypotheses_as_unfinished() -> None:
    (result,) = beam_search(table_scorer(LENGTH_PENALTY), 1, 2, BOS, EOS, max_len=2, n_best=3, trace=True)
    assert [(h.tokens, h.finished) for h in result.hypotheses] == [((EOS,), True), ((A, A), False), ((A, B), False)]
    assert result.hypotheses[1].score == approx(math.log(0.7 * 0.95) / lp(2))
    assert result.trace is not None and result.trace.stop_reason == STOP_MAX_LEN

    (greedy,) = greedy_search(table_scorer(LENGTH_PENALTY), 1, BOS, EOS, max_len=2)
    assert greedy.tokens == (A, A) and not greedy.finished


@pytest.mark.parametrize("seed", range(6))
def test_beam_size_one_is_greedy(seed: int) -> None:
    max_lens = [3, 7, 12]
    greedy = greedy_search(random_scorer(seed, 3), 3, BOS, EOS, max_lens)
    beam = beam_search(random_scorer(seed, 3), 3, 1, BOS, EOS, max_lens)
    assert [r.hypotheses for r in beam] == [[h] for h in greedy]


@pytest.mark.parametrize("seed", range(3))
def test_batched_search_equals_one_sentence_at_a_time(seed: int) -> None:
    max_lens = [4, 9, 6]
    batched_scorer = random_scorer(seed, 3)
    batched = beam_search(batched_scorer, 3, 3, BOS, EOS, max_lens, n_best=3, trace=True)
    for s in range(3):
        one = PrefixScorer(lambda _, prefix, s=s: batched_scorer.probs(s, prefix), 1)
        (alone,) = beam_search(one, 1, 3, BOS, EOS, max_lens[s], n_best=3, trace=True)
        assert alone.hypotheses == batched[s].hypotheses
        assert dataclasses.asdict(alone) == dataclasses.asdict(batched[s])
        assert max(len(h.tokens) for h in alone.hypotheses) <= max_lens[s]


def test_batched_tables_and_reorder_indices() -> None:
    scorer = table_scorer(GREEDY_TRAP, LENGTH_PENALTY, GREEDY_TRAP)
    results = beam_search(scorer, 3, 2, BOS, EOS, max_len=[5, 10, 1])
    assert [h.tokens for h in results[0].hypotheses] == [(B, EOS), (A, EOS)]
    assert [h.tokens for h in results[1].hypotheses] == [(A, A, EOS), (EOS,)]
    assert [(h.tokens, h.finished) for h in results[2].hypotheses] == [((A,), False), ((B,), False)]
    # Rows stay grouped by sentence; sentence 2 stops at max_len 1 and its rows are dropped.
    assert scorer.reorders[0] == [0, 0, 1]
    assert scorer.reorders[1] == [2, 2]  # sentence 0 done; sentence 1's (A A), (A B) both extend row 2


def test_greedy_drops_finished_rows() -> None:
    scorer = table_scorer(GREEDY_TRAP, LENGTH_PENALTY)
    first, second = greedy_search(scorer, 2, BOS, EOS, max_len=10)
    assert first.tokens == (A, EOS)
    assert second.tokens == (A, A, C, EOS)
    assert scorer.reorders == [[1]]
    assert scorer.n_scored == 2 + 2 + 1 + 1


@pytest.mark.parametrize("beam_size", [2, 3])
def test_trace_is_a_consistent_tree(beam_size: int) -> None:
    (result,) = beam_search(random_scorer(7, 1), 1, beam_size, BOS, EOS, max_len=8, trace=True)
    trace = result.trace
    assert trace is not None and trace.beam_size == beam_size and trace.max_len == 8
    root = trace.steps[0].live
    assert [(n.id, n.parent_id, n.token, n.tokens) for n in root] == [(0, None, BOS, ())]
    ids = [0] + [c.id for step in trace.steps for c in step.candidates]
    assert len(ids) == len(set(ids)), "node ids must be unique"
    for t, step in enumerate(trace.steps):
        assert step.step == t
        assert len(step.candidates) == 2 * beam_size
        log_probs = [c.log_prob for c in step.candidates]
        assert log_probs == sorted(log_probs, reverse=True)
        kept = [c for c in step.candidates if c.status == "kept"]
        assert len(kept) == beam_size  # full support: at most k EOS among the 2k
        for c in step.candidates:
            parent = step.live[c.parent]
            assert c.parent_id == parent.id
            assert c.log_prob == approx(parent.log_prob + c.token_log_prob)
            assert c.score == approx(c.log_prob / lp(t + 1))
        if t + 1 < len(trace.steps):
            following = trace.steps[t + 1].live
            expected = [(c.id, c.parent_id, c.token) for c in kept]
            assert [(n.id, n.parent_id, n.token) for n in following] == expected
            for c, node in zip(kept, following, strict=True):
                assert node.tokens == step.live[c.parent].tokens + (c.token,)
                assert node.log_prob == c.log_prob
    n_finished = sum(c.status == "finished" for step in trace.steps for c in step.candidates)
    assert n_finished == len([h for h in trace.finished if h.finished]) >= beam_size
    assert result.hypotheses == trace.finished[:beam_size]


def test_trace_serializes_to_json() -> None:
    (result,) = beam_search(table_scorer(LENGTH_PENALTY), 1, 2, BOS, EOS, max_len=10, trace=True)
    assert result.trace is not None
    data = json.loads(json.dumps(dataclasses.asdict(result.trace)))
    assert data["beam_size"] == 2 and data["alpha"] == 0.6
    assert data["steps"][0]["candidates"][1]["status"] == "finished"
    assert data["finished"][0]["tokens"] == [A, A, EOS]
    json.dumps(dataclasses.asdict(result))


def test_trace_is_none_unless_asked() -> None:
    (result,) = beam_search(table_scorer(GREEDY_TRAP), 1, 2, BOS, EOS, max_len=5)
    assert result.trace is None


# --- the no-repeat-n-gram constraint -------------------------------------------------------


def looping_scorer(batch_size: int = 1) -> PrefixScorer:
    """A model stuck in a loop: after A comes B, after B comes A (p = .6 each); C is the way out."""
    after = {
        None: {A: 0.6, B: 0.3, C: 0.05, EOS: 0.05},
        A: {B: 0.6, C: 0.25, EOS: 0.15},
        B: {A: 0.6, C: 0.25, EOS: 0.15},
        C: {EOS: 0.7, A: 0.3},
    }

    def probs(s: int, prefix: tuple[int, ...]) -> np.ndarray:
        p = np.full(VOCAB, 1e-9)
        for token, value in after[prefix[-1] if prefix else None].items():
            p[token] = value
        return p / p.sum()

    return PrefixScorer(probs, batch_size)


def ngrams(tokens: tuple[int, ...], n: int) -> list[tuple[int, ...]]:
    return [tokens[i : i + n] for i in range(len(tokens) - n + 1)]


def test_no_repeat_ngram_breaks_a_greedy_loop() -> None:
    (looped,) = greedy_search(looping_scorer(), 1, BOS, EOS, max_len=10)
    assert looped.tokens == (A, B) * 5 and not looped.finished
    (constrained,) = greedy_search(looping_scorer(), 1, BOS, EOS, max_len=10, no_repeat_ngram=2)
    # After A B A, the 2-gram (A, B) would repeat: B is banned, C (.25) beats EOS (.15); after C, EOS.
    assert constrained.tokens == (A, B, A, C, EOS) and constrained.finished
    assert constrained.token_log_probs[3] == approx(math.log(0.25 / (1 + 1e-9 * 2)))


def test_no_repeat_ngram_three_allows_a_2gram_twice() -> None:
    (constrained,) = greedy_search(looping_scorer(), 1, BOS, EOS, max_len=10, no_repeat_ngram=3)
    # After A B A the only 3-gram is (A, B, A), so B (completing (B, A, B)) is free; after A B A B, A would
    # complete (A, B, A) a second time: banned.
    assert constrained.tokens[:4] == (A, B, A, B) and constrained.tokens[4] != A
    assert all(ngrams(constrained.tokens, 3).count(g) == 1 for g in ngrams(constrained.tokens, 3))


@pytest.mark.parametrize("beam_size", [1, 2, 3])
def test_no_repeat_ngram_in_beam_search(beam_size: int) -> None:
    (plain,) = beam_search(looping_scorer(), 1, beam_size, BOS, EOS, max_len=10, n_best=beam_size)
    (result,) = beam_search(
        looping_scorer(), 1, beam_size, BOS, EOS, max_len=10, n_best=beam_size, trace=True, no_repeat_ngram=2
    )
    assert plain.hypotheses != result.hypotheses
    for h in result.hypotheses:
        grams = ngrams(h.tokens, 2)
        assert len(grams) == len(set(grams)), f"{h.tokens} repeats a 2-gram"
    assert result.trace is not None
    for step in result.trace.steps:  # banned continuations never even become candidates
        for c in step.candidates:
            prefix = step.live[c.parent].tokens
            assert prefix[-1:] + (c.token,) not in ngrams(prefix, 2)
    if beam_size == 1:
        (greedy,) = greedy_search(looping_scorer(), 1, BOS, EOS, max_len=10, no_repeat_ngram=2)
        assert result.hypotheses == [greedy]


@pytest.mark.parametrize("seed", range(3))
def test_no_repeat_ngram_batched_equals_one_sentence_at_a_time(seed: int) -> None:
    """Each row is masked by its own history: batching (rows of other sentences and beams) changes nothing."""
    max_lens = [6, 12, 9]
    for beam_size in (1, 3):
        batched_scorer = random_scorer(seed, 3, vocab=4)
        batched = beam_search(batched_scorer, 3, beam_size, BOS, EOS, max_lens, n_best=beam_size, no_repeat_ngram=2)
        greedy = greedy_search(random_scorer(seed, 3, vocab=4), 3, BOS, EOS, max_lens, no_repeat_ngram=2)
        for s in range(3):
            one = PrefixScorer(lambda _, prefix, s=s, probs=batched_scorer.probs: probs(s, prefix), 1)
            (alone,) = beam_search(one, 1, beam_size, BOS, EOS, max_lens[s], n_best=beam_size, no_repeat_ngram=2)
            assert alone.hypotheses == batched[s].hypotheses
            for h in alone.hypotheses:
                assert len(set(ngrams(h.tokens, 2))) == len(ngrams(h.tokens, 2))
            if beam_size == 1:
                assert batched[s].hypotheses == [greedy[s]]


def test_no_repeat_ngram_unset_leaves_the_search_as_it_was() -> None:
    """None is the default, and the default never touches the scores (bitwise, hypotheses and trace)."""
    for seed in range(3):
        default = beam_search(random_scorer(seed, 3, vocab=4), 3, 3, BOS, EOS, 12, trace=True)
        unset = beam_search(random_scorer(seed, 3, vocab=4), 3, 3, BOS, EOS, 12, trace=True, no_repeat_ngram=None)
        assert [dataclasses.asdict(r) for r in default] == [dataclasses.asdict(r) for r in unset]
        assert greedy_search(random_scorer(seed, 3, vocab=4), 3, BOS, EOS, 12) == greedy_search(
            random_scorer(seed, 3, vocab=4), 3, BOS, EOS, 12, no_repeat_ngram=None
        )
    with pytest.raises(AssertionError, match="no_repeat_ngram must be >= 1"):
        greedy_search(random_scorer(0, 1), 1, BOS, EOS, 5, no_repeat_ngram=0)
