"""Beam tables (explorer/analysis/beam.py) over a search driven by a hand-made probability table."""

from __future__ import annotations

import math

import pytest

from explorer.analysis.beam import nbest_rows, node_tokens, step_rows
from explorer.decoding import beam_search, length_penalty
from tests.engine.test_beam_tree_figure import BOS, EOS, LABELS, TableScorer


class Pieces:
    """The Tokenizer methods the tables use, over LABELS (one vocabulary for source and target)."""

    def pieces(self, ids):
        return [LABELS[i] for i in ids]

    def target_pieces(self, ids):
        return self.pieces(ids)

    def decode(self, ids):
        return " ".join(LABELS[i] for i in ids if i not in (EOS, BOS))


@pytest.fixture(scope="module")
def result():
    (found,) = beam_search(TableScorer(), 1, 2, BOS, EOS, max_len=10, alpha=0.6, trace=True)
    return found


def test_nbest_rows_carry_text_scores_and_length_penalty(result):
    rows = nbest_rows(result.hypotheses, Pieces(), alpha=0.6)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    best = result.hypotheses[0]
    assert rows[0]["pieces"] == " ".join(LABELS[t] for t in best.tokens)
    assert rows[0]["translation"] == Pieces().decode(best.tokens)
    assert rows[0]["lp(length)"] == pytest.approx(length_penalty(len(best.tokens), 0.6))
    assert rows[0]["score"] == pytest.approx(rows[0]["log p"] / rows[0]["lp(length)"])
    assert rows[0]["score"] >= rows[1]["score"]


def test_node_tokens_rebuild_every_prefix(result):
    tokens = node_tokens(result.trace)
    assert tokens[0] == ()
    for step in result.trace.steps:
        for c in step.candidates:
            assert tokens[c.id] == tokens[c.parent_id] + (c.token,)
            assert len(tokens[c.id]) == step.step + 1
    finished = {tokens[c.id] for s in result.trace.steps for c in s.candidates if c.status == "finished"}
    assert {h.tokens for h in result.hypotheses if h.finished} <= finished


def test_step_rows_list_the_candidates_of_one_step(result):
    rows = step_rows(result.trace, 1, Pieces())
    candidates = result.trace.steps[1].candidates
    assert len(rows) == len(candidates)
    assert rows[0]["prefix"] == "a" and rows[0]["token"] == "a"  # (A,) -> A with p = 0.95
    assert rows[0]["log p(token)"] == pytest.approx(math.log(0.95), rel=1e-6)
    assert [r["status"] for r in rows] == [c.status for c in candidates]
    assert step_rows(result.trace, 0, Pieces())[0]["prefix"] == "<s>"
    with pytest.raises(ValueError):
        step_rows(result.trace, len(result.trace.steps), Pieces())
