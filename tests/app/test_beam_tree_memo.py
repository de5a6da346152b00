"""Beam's tree figure is remembered by value (explorer/figures/memo.py): the page hands it the trace's pieces as a
list (ui/beam/tree.trace_pieces), the tree drawn from them carries the data the tokenizer's pieces gave it before,
an equal call is served from memory, and another step or highlight builds anew."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from explorer.decoding import BeamTrace, beam_search
from explorer.figures import beam_tree
from tests.engine.test_beam_tree_figure import BOS, EOS, LABELS, TableScorer
from tests.engine.test_figure_memo import data
from tests.engine.test_page_figure_memo import counted
from ui.beam.tree import trace_pieces


class Pieces:
    """The one method of a tokenizer the tree's labels use."""

    def target_pieces(self, ids: Iterable[int]) -> list[str]:
        return [LABELS[int(i)] for i in ids]


@pytest.fixture(scope="module")
def trace() -> BeamTrace:
    (result,) = beam_search(TableScorer(), 1, 2, BOS, EOS, max_len=10, trace=True)
    assert result.trace is not None
    return result.trace


def test_the_tree_from_the_pieces_list_has_the_data_of_the_tokenizer_built_one(trace):
    pieces = trace_pieces(trace, Pieces())
    ids = {node.token for step in trace.steps for node in (*step.live, *step.candidates)}
    assert isinstance(pieces, list) and len(pieces) == max(ids) + 1
    assert all(pieces[token] == LABELS[token] for token in ids)
    for upto in (0, 1, None):
        kwargs = dict(upto_step=upto, highlight=(2, 2, EOS), lang="ko", max_height=470, width=600)
        before = beam_tree.beam_tree_figure.__wrapped__(
            trace, lambda token: Pieces().target_pieces([token])[0], **kwargs
        )  # what the page drew before: a function of the tokenizer, nothing remembered
        assert data(beam_tree.beam_tree_figure(trace, pieces, **kwargs)) == data(before)


def test_an_equal_tree_is_served_from_memory_and_another_step_builds(trace, monkeypatch):
    pieces = trace_pieces(trace, Pieces())
    kwargs = dict(highlight=(2, 2, EOS), max_height=470, width=617)  # a width no other test asks for
    first = beam_tree.beam_tree_figure(trace, pieces, upto_step=1, **kwargs)
    builds = counted(monkeypatch, beam_tree, "_layout")
    again = beam_tree.beam_tree_figure(trace, list(pieces), upto_step=1, **kwargs)  # equal values, new objects
    assert not builds, "a step shown before is built again"
    assert data(again) == data(first) and again is not first
    beam_tree.beam_tree_figure(trace, pieces, upto_step=0, **kwargs)
    beam_tree.beam_tree_figure(trace, pieces, upto_step=1, **{**kwargs, "highlight": (2, 3, EOS)})
    assert len(builds) == 2
