"""Ablation meets beam search: the two searches' kept prefixes compared, the BLEU change of a batch, and the explain
page's section under AppTest in both languages (words fixture)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.data.multi30k import load_multi30k, multi30k_available
from explorer.evaluation import corpus_scores
from explorer.explain.ablated_beam import ablation_bleu, compare_beams, kept_prefixes
from explorer.inference import translate
from explorer.model import HeadMask
from tests.apptest_helpers import charts, open_page

SENTENCE = "a small child sees the red dog ."
HEADS = ["cross.1.0", "dec.1.1"]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def words(words_checkpoint):
    return load_checkpoint(words_checkpoint)


def test_no_head_off_changes_nothing_and_heads_off_split_the_prefixes(words):
    same = compare_beams(words.model, words.tokenizer, SENTENCE, [], beam_size=3, alpha=0.6)
    assert same.full.output_ids == same.ablated.output_ids and not same.dropped and not same.added
    assert all(c.change == 0.0 for c in same.shared)

    found = compare_beams(words.model, words.tokenizer, SENTENCE, HEADS, beam_size=3, alpha=0.6)
    mask = HeadMask.from_names(HEADS, words.config)
    (expected,) = translate(words.model, words.tokenizer, [SENTENCE], beam_size=3, head_mask=mask)
    assert found.ablated.output_ids == expected.output_ids
    assert found.full.trace is not None and found.ablated.trace is not None
    before, after = kept_prefixes(found.full.trace), kept_prefixes(found.ablated.trace)
    assert {c.tokens for c in found.dropped} == before.keys() - after.keys()
    assert {c.tokens for c in found.added} == after.keys() - before.keys()
    assert {c.tokens for c in found.shared} == before.keys() & after.keys()
    assert found.dropped and found.added, "these two heads change what the beam keeps"
    changes = [abs(c.change or 0.0) for c in found.shared]
    assert changes == sorted(changes, reverse=True)
    # The finished translation is among the kept prefixes, at its own score.
    assert before[tuple(found.full.output_ids)] == pytest.approx(found.full.score)


def test_bleu_change_is_the_two_searches_scores(words):
    sources = ["a man rides a bicycle .", "the dog walks in the park .", SENTENCE]
    references = ["ein Mann fährt ein Fahrrad .", "der Hund läuft im Park .", "ein kleines Kind sieht den roten Hund ."]
    change = ablation_bleu(words.model, words.tokenizer, sources, references, HEADS, beam_size=2, alpha=0.6)
    mask = HeadMask.from_names(HEADS, words.config)
    off = [t.output for t in translate(words.model, words.tokenizer, sources, beam_size=2, head_mask=mask)]
    assert list(change.ablated_outputs) == off
    assert change.ablated.bleu == pytest.approx(corpus_scores(off, references).bleu)
    assert change.change == pytest.approx(change.ablated.bleu - change.full.bleu)
    none = ablation_bleu(words.model, words.tokenizer, sources, references, [], beam_size=2, alpha=0.6)
    assert none.change == 0.0


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_page_draws_both_trees_and_scores_a_batch(checkpoint_root, words, monkeypatch, lang):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoint_root))
    at = open_page(
        "pages/explain.py",
        model="words-fixture",
        x_view="beam",
        x_sentence=SENTENCE,
        x_beam="3",
        lang=lang,
        state={"x_off": HEADS},
    )
    found = compare_beams(words.model, words.tokenizer, SENTENCE, HEADS, beam_size=3, alpha=0.6)
    (full,), (ablated,) = charts(at, "x_tree_full"), charts(at, "x_tree_ablated")
    assert full["data"] and ablated["data"]
    counts = f"dropped {len(found.dropped)} prefixes the full search kept and kept {len(found.added)} it did not"
    assert lang == "ko" or any(counts in m.value for m in at.markdown)
    dropped = at.dataframe[0]  # the first tab: the prefixes dropped
    assert len(dropped.value) == min(12, len(found.dropped))
    if not multi30k_available() or lang == "ko":
        return
    at.toggle(key="x_bleu").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    test = load_multi30k("test2016")
    expected = ablation_bleu(
        words.model, words.tokenizer, test.source[:50], test.target[:50], HEADS, beam_size=3, alpha=0.6
    )
    shown = {m.label: m.value for m in at.metric}
    assert shown["BLEU with every head"] == f"{expected.full.bleu:.2f}"
    assert shown["BLEU with the heads off"] == f"{expected.ablated.bleu:.2f}"
    assert np.isfinite(expected.change)
