"""The one "raw / value-weighted" switch (ui/attention_controls.py) on the pages that draw attention: Translate,
Compare and Step by step draw explorer.explain.value_weighted's numbers when it is on, the raw weights when off;
Translate names the sink heads under its grid. Under AppTest on the words fixture, in English and Korean."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.explain.sinks import family_sinks
from explorer.explain.value_weighted import ValueWeighted, value_weighted
from explorer.inference import Translation, translate
from tests.apptest_helpers import chart, open_page, plotly_array

SENTENCE = "a small child sees the red dog ."

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def expected(words_checkpoint) -> tuple[Translation, ValueWeighted]:
    checkpoint = load_checkpoint(words_checkpoint)
    found = translate(checkpoint.model, checkpoint.tokenizer, [SENTENCE], with_attention=True)[0]
    return found, value_weighted(checkpoint.model, found.source_ids, found.output_ids)


def _z(at, key: str) -> np.ndarray:
    return plotly_array(chart(at, key)["data"][0]["z"])


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_translate_draws_the_value_weighted_head(checkpoint_root, monkeypatch, expected, lang):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoint_root))
    found, explained = expected
    # The fixture's cross-attention is close to uniform either way; its encoder's first layer is not.
    params = dict(sentence=SENTENCE, family="encoder_self", layer="1", head="2")
    at = open_page("pages/translate.py", model="words-fixture", lang=lang, **params)
    raw = _z(at, "translate_head")
    np.testing.assert_allclose(raw, found.attention.encoder_self[0, 1], atol=1e-5)
    at.segmented_control(key="weighting").set_value("value_weighted").run()
    assert not at.exception, [e.message for e in at.exception]
    drawn = _z(at, "translate_head")
    np.testing.assert_allclose(drawn, explained.weighted("encoder_self")[0, 1], atol=1e-5)
    assert np.abs(drawn - raw).max() > 0.05, "the switch must change what is drawn"
    assert at.query_params["weighting"] in ("value_weighted", ["value_weighted"])


def test_translate_grid_names_its_sink_heads(checkpoint_root, monkeypatch, expected):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoint_root))
    # The fixture has no head that passes the page's test; a looser one flags its encoder's layer 2, head 2, which
    # puts 58% of its weight on "." and </s>.
    monkeypatch.setattr("explorer.explain.sinks.SINK_KEEPS", 1.1)
    found, explained = expected
    at = open_page("pages/translate.py", model="words-fixture", sentence=SENTENCE, mode="grid", family="encoder_self")
    sinks = [s for s in family_sinks(explained, "encoder_self", found.source_pieces) if s.is_sink]
    assert [s.name for s in sinks] == ["enc.1.1"]
    caption = next(c.value for c in at.caption if "all on the same colour scale" in c.value)
    (sink,) = sinks
    raw, weighted = f"{sink.raw_share:.0%}", f"{sink.weighted_share:.0%}"
    assert f"Sinks (weight on end and punctuation tokens that moves little): layer 2 head 2 (raw {raw}, " in caption
    assert f"value-weighted {weighted})" in caption


def test_compare_panels_follow_the_switch(checkpoint_root, monkeypatch, expected):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoint_root))
    _, explained = expected
    panels = dict(c_f0="encoder_self", c_l0="1", c_h0="2", c_f1="decoder_self", c_l1="2", c_h1="1")
    at = open_page(
        "pages/compare.py",
        model="words-fixture",
        c_sentence=SENTENCE,
        c_linked="false",
        weighting="value_weighted",
        **panels,
    )
    (figure,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == "compare_figure"]
    first, second = (plotly_array(trace["z"]) for trace in figure["data"][:2])
    np.testing.assert_allclose(first, explained.weighted("encoder_self")[0, 1], atol=1e-5)
    np.testing.assert_allclose(second, explained.weighted("decoder_self")[1, 0], atol=1e-5)


def test_step_by_step_shows_the_followed_rows_value_weighted_share(checkpoint_root, monkeypatch, expected):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoint_root))
    found, explained = expected
    params = dict(sbs_sentence=SENTENCE, sbs_family="encoder_self", sbs_layer="2", sbs_head="1", sbs_query="3")
    params["sbs_part"] = "output"  # the weighted sum of the values, in Eq. 1's second tab
    at = open_page("pages/step_by_step.py", model="words-fixture", lang="ko", **params)
    assert not [c for c in at.get("plotly_chart") if c.key == "sbs_value_weighted"], "off by default"
    at.segmented_control(key="weighting").set_value("value_weighted").run()
    assert not at.exception, [e.message for e in at.exception]
    rows = _z(at, "sbs_value_weighted")
    np.testing.assert_allclose(rows[0], found.attention.encoder_self[1, 0, 3], atol=1e-5)
    np.testing.assert_allclose(rows[1], explained.weighted("encoder_self")[1, 0, 3], atol=1e-5)
