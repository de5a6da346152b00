"""The compare-heads page (through app.py, on the fixture checkpoints) and its figure builder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.figures.compare import Panel, compare_heads, panel_grid, shared_zmax
from explorer.inference import translate
from tests.apptest_helpers import open_page, plotly_array, query_value

PAGE = "pages/compare.py"
SENTENCE = "a small child sees the red dog ."


def figure(at) -> dict:
    (chart,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == "compare_figure"]
    return chart


def attention(checkpoint_dir: Path, sentence: str):
    ck = load_checkpoint(checkpoint_dir)
    return translate(ck.model, ck.tokenizer, [sentence], with_attention=True)[0]


# --- figure builder -------------------------------------------------------------------------------------------


def _panel(q: int, k: int, seed: int, title: str) -> Panel:
    w = np.random.default_rng(seed).random((q, k))
    return Panel(w / w.sum(-1, keepdims=True), [f"q{i}" for i in range(q)], [f"k{j}" for j in range(k)], title)


def test_compare_heads_shares_one_colour_axis_and_keeps_token_order():
    panels = [_panel(3, 4, 0, "A"), _panel(5, 2, 1, "B <s>"), _panel(2, 2, 2, "C")]
    fig = compare_heads(panels)
    assert [t.meta["panel"] for t in fig.data] == [0, 1, 2]
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1.0
    np.testing.assert_allclose(fig.data[1].z, panels[1].weights)
    assert list(fig.layout.yaxis2.ticktext) == ["q0", "q1", "q2", "q3", "q4"]  # queries, top to bottom
    assert list(fig.layout.yaxis2.range) == [4.5, -0.5]
    assert list(fig.layout.xaxis2.ticktext) == ["k0", "k1"]
    assert [a.text for a in fig.layout.annotations] == ["A", "B &lt;s&gt;", "C"]
    shared = compare_heads(panels, zmax=None)
    assert shared.layout.coloraxis.cmax == pytest.approx(shared_zmax(panels))
    assert shared_zmax(panels) == pytest.approx(max(p.weights.max() for p in panels))


def test_panel_layout():
    assert [panel_grid(n) for n in (1, 2, 3, 4)] == [(1, 1), (1, 2), (1, 3), (2, 2)]
    with pytest.raises(AssertionError):
        compare_heads([])


# --- the page -------------------------------------------------------------------------------------------------


def test_heads_side_by_side_from_url(checkpoint_root, words_checkpoint):
    at = open_page(
        PAGE,
        model="words-fixture",
        c_compare="heads",
        c_sentence=SENTENCE,
        c_n="3",
        c_f0="encoder_self",
        c_l0="1",
        c_h0="2",
        c_f1="cross",
        c_l1="2",
        c_h1="1",
        c_f2="decoder_self",
        c_l2="2",
        c_h2="2",
    )
    fig = figure(at)
    assert [trace["name"] for trace in fig["data"]] == [
        "Encoder self \u00b7 layer 1 \u00b7 head 2",
        "Cross \u00b7 layer 2 \u00b7 head 1",
        "Decoder self \u00b7 layer 2 \u00b7 head 2",
    ]
    t = attention(words_checkpoint, SENTENCE)
    for trace, expected in zip(
        fig["data"],
        (t.attention.encoder_self[0, 1], t.attention.cross[1, 0], t.attention.decoder_self[1, 1]),
        strict=True,
    ):
        np.testing.assert_allclose(plotly_array(trace["z"]), expected, atol=1e-5)
    assert fig["layout"]["coloraxis"]["cmax"] == 1.0

    at.segmented_control(key="c_scale").set_value("shared").run()
    top = max(t.attention.encoder_self[0, 1].max(), t.attention.cross[1, 0].max(), t.attention.decoder_self[1, 1].max())
    assert figure(at)["layout"]["coloraxis"]["cmax"] == pytest.approx(float(top), abs=1e-5)
    assert query_value(at, "c_scale") == "shared"


def test_same_head_in_two_checkpoints(checkpoint_root, reverse_checkpoint, words_checkpoint):
    sentence = "a b c d"
    at = open_page(
        PAGE,
        model="reverse-fixture",
        c_compare="checkpoints",
        c_model2="words-fixture",
        c_sentence=sentence,
        c_family="encoder_self",
        c_l0="2",
        c_h0="1",
        c_l1="2",
        c_h1="1",
    )
    fig = figure(at)
    assert [trace["name"] for trace in fig["data"]] == [
        "reverse-fixture: Encoder self \u00b7 layer 2 \u00b7 head 1",
        "words-fixture: Encoder self \u00b7 layer 2 \u00b7 head 1",
    ]
    for trace, ck in zip(fig["data"], (reverse_checkpoint, words_checkpoint), strict=True):
        np.testing.assert_allclose(
            plotly_array(trace["z"]), attention(ck, sentence).attention.encoder_self[1, 0], atol=1e-5
        )


def test_same_head_on_two_sentences_and_empty_input(checkpoint_root, reverse_checkpoint):
    at = open_page(
        PAGE,
        model="reverse-fixture",
        c_compare="sentences",
        c_sentence="a b c",
        c_sentence2="d e f g h",
        c_family="cross",
        c_layer="1",
        c_head="2",
    )
    fig = figure(at)
    shapes = [plotly_array(trace["z"]).shape for trace in fig["data"]]
    first, second = attention(reverse_checkpoint, "a b c"), attention(reverse_checkpoint, "d e f g h")
    assert shapes == [first.attention.cross[0, 1].shape, second.attention.cross[0, 1].shape]
    np.testing.assert_allclose(plotly_array(fig["data"][1]["z"]), second.attention.cross[0, 1], atol=1e-5)

    at.text_input(key="c_sentence2").set_value("").run()
    assert not at.exception
    assert any("Type both sentences" in i.value for i in at.info)
