"""The best alignment heads named on the Heads page, and a head's links over the reference alignment on the
Translate view (in English) and the Heads page (in Korean), on the shipped Multi30k model (AppTest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.data.multi30k import load_multi30k, multi30k_available
from explorer.explain.alignment import aer_counts
from explorer.explain.head_alignment import MULTI30K_TEST2016, align_heads, align_sentence, read_reference
from tests.apptest_helpers import chart, charts, open_page, plotly_array

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "checkpoints" / "multi30k-en-de"

pytestmark = [
    pytest.mark.usefixtures("one_torch_thread"),
    pytest.mark.skipif(not multi30k_available(), reason="Multi30k test2016 not found"),
]


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(SHIPPED)


@pytest.fixture(scope="module")
def test2016():
    test = load_multi30k("test2016")
    return list(test.source), list(test.target), read_reference(MULTI30K_TEST2016)


def test_one_pairs_links_are_the_ones_the_corpus_aer_counts(shipped, test2016):
    sources, targets, references = (part[:12] for part in test2016)
    (scores,) = align_heads(shipped.model, shipped.tokenizer, sources, targets, references, shifts=(1,))
    pairs = zip(sources, targets, references, strict=True)
    aligned = [align_sentence(shipped.model, shipped.tokenizer, *pair) for pair in pairs]
    layers, heads = scores.heads.shape
    for layer in range(layers):
        for head in range(heads):
            total = sum(
                (aer_counts(a.head_links(layer, head, shift=1), a.sure, a.possible) for a in aligned if a),
                start=aer_counts(frozenset(), frozenset()),
            )
            assert total.aer == pytest.approx(scores.heads[layer, head])


def test_heads_page_names_the_best_aligners_and_draws_one_over_the_reference(shipped, test2016, monkeypatch):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(SHIPPED.parent))
    sources, targets, references = (part[:100] for part in test2016)
    read, _ = align_heads(shipped.model, shipped.tokenizer, sources, targets, references)
    best, second = read.ranked()[:2]
    at = open_page("pages/heads.py", model="multi30k-en-de", h_sentence=sources[3], lang="ko", h_view="roles")
    named = f"cross.{best[0]}.{best[1]} ({best[2]:.2f}), cross.{second[0]}.{second[1]} ({second[2]:.2f})"
    assert any(named in m.value for m in at.markdown), named
    # The overlay opens on the best head and on the test pair of the page's sentence.
    figure = chart(at, "h_align_overlay")["data"]
    aligned = align_sentence(shipped.model, shipped.tokenizer, sources[3], targets[3], references[3])
    assert aligned is not None
    np.testing.assert_allclose(plotly_array(figure[0]["z"]), aligned.raw[best[0], best[1]], atol=1e-5)
    crosses = {(int(x), int(y)) for x, y in zip(figure[3]["x"], figure[3]["y"], strict=True)}
    assert crosses == aligned.head_links(best[0], best[1])
    sure = {(int(x), int(y)) for x, y in zip(figure[1]["x"], figure[1]["y"], strict=True)}
    assert sure == aligned.sure


def test_translate_overlay_follows_the_switch(shipped, test2016, monkeypatch):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(SHIPPED.parent))
    sources, targets, references = test2016
    at = open_page(
        "pages/translate.py", model="multi30k-en-de", sentence=sources[0], weighting="value_weighted", ta_head="2"
    )
    assert not charts(at, "ta_overlay"), "closed, the expander draws nothing"
    at = open_page(
        "pages/translate.py",
        model="multi30k-en-de",
        sentence=sources[0],
        weighting="value_weighted",
        ta_head="2",
        ta_align="true",
    )
    figure = chart(at, "ta_overlay")["data"]
    aligned = align_sentence(shipped.model, shipped.tokenizer, sources[0], targets[0], references[0])
    assert aligned is not None
    last = shipped.config.n_decoder_layers - 1
    np.testing.assert_allclose(plotly_array(figure[0]["z"]), aligned.value_weighted[last, 1], atol=1e-5)
    crosses = {(int(x), int(y)) for x, y in zip(figure[3]["x"], figure[3]["y"], strict=True)}
    assert crosses == aligned.head_links(last, 1, weighted=True)
