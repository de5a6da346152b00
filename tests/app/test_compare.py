"""The compare-heads page (through app.py, on the fixture checkpoints) and its figure builder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.figures.compare import Panel, compare_heads, panel_grid, shared_zmax
from explorer.figures.linked_heads import SELECTION
from explorer.inference import translate
from tests.apptest_helpers import open_page, plotly_array, query_value

PAGE = "pages/compare.py"
SENTENCE = "a small child sees the red dog ."


def figure(at) -> dict:
    (chart,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == "compare_figure"]
    return chart


def linked_chart(at) -> tuple[dict, list]:
    """The page's one Vega-Lite chart: its spec and, per view in order, its data (Streamlit sends the datasets
    as Arrow, named as the views' `data.name`)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    charts = [e.proto for e in at.get("vega_lite_chart")]
    assert len(charts) == 1, f"expected one linked chart, found {len(charts)}"
    spec = json.loads(charts[0].spec)
    data = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in charts[0].datasets}
    return spec, [data[view["data"]["name"]] for view in spec["concat"]]


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
        c_linked="false",
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

    at.radio(key="c_scale").set_value("shared").run()
    top = max(t.attention.encoder_self[0, 1].max(), t.attention.cross[1, 0].max(), t.attention.decoder_self[1, 1].max())
    assert figure(at)["layout"]["coloraxis"]["cmax"] == pytest.approx(float(top), abs=1e-5)
    assert query_value(at, "c_scale") == "shared"


def test_same_head_in_two_checkpoints(checkpoint_root, reverse_checkpoint, words_checkpoint):
    sentence = "a b c d"
    at = open_page(
        PAGE,
        model="reverse-fixture",
        c_compare="checkpoints",
        c_linked="false",
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
        c_linked="false",
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


# --- synchronized heads: the linked Altair chart is the page's default view -------------------------


def test_linked_chart_shows_the_heads_compared_on_one_scale(checkpoint_root, words_checkpoint):
    at = open_page(
        PAGE,
        model="words-fixture",
        c_compare="heads",
        c_sentence=SENTENCE,
        c_n="3",
        c_f0="encoder_self",
        c_l0="1",
        c_h0="2",
        c_f1="encoder_self",
        c_l1="2",
        c_h1="1",
        c_f2="cross",
        c_l2="2",
        c_h2="2",
    )
    assert not at.get("plotly_chart"), "the linked view replaces the plotly figure"
    spec, data = linked_chart(at)
    views = spec["concat"]
    assert [" \u00b7 ".join(v["title"]["text"]) for v in views] == [
        "Encoder self \u00b7 layer 1 \u00b7 head 2",
        "Encoder self \u00b7 layer 2 \u00b7 head 1",
        "Cross \u00b7 layer 2 \u00b7 head 2",
    ]
    (param,) = spec["params"]
    assert param["name"] == SELECTION and param["select"]["fields"] == ["query"]
    assert sorted(param["views"]) == sorted(v["name"] for v in views), "every head shares the hover selection"
    t = attention(words_checkpoint, SENTENCE)
    for frame, expected in zip(
        data, (t.attention.encoder_self[0, 1], t.attention.encoder_self[1, 0], t.attention.cross[1, 1]), strict=True
    ):
        frame = frame.sort_values(["query", "key"])
        np.testing.assert_allclose(frame["weight"].to_numpy().reshape(expected.shape), expected, atol=1e-5)
    assert {json.dumps(v["encoding"]["color"]["scale"]) for v in views} == {
        json.dumps(views[0]["encoding"]["color"]["scale"])
    }
    assert views[0]["encoding"]["color"]["scale"]["domain"] == [0.0, 1.0]
    assert any("same query token lights up in every head" in c.value for c in at.caption)

    at.radio(key="c_scale").set_value("shared").run()
    spec, _ = linked_chart(at)
    top = max(t.attention.encoder_self[0, 1].max(), t.attention.encoder_self[1, 0].max(), t.attention.cross[1, 1].max())
    assert spec["concat"][0]["encoding"]["color"]["scale"]["domain"] == pytest.approx([0.0, float(top)], abs=1e-5)

    at.toggle(key="c_linked").set_value(False).run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1  # the plotly figure, with its PNG/SVG downloads


def test_linked_chart_in_korean(checkpoint_root, reverse_checkpoint):
    at = open_page(
        PAGE,
        model="reverse-fixture",
        lang="ko",
        c_compare="sentences",
        c_sentence="a b c",
        c_sentence2="d e f g h",
        c_family="cross",
        c_layer="1",
        c_head="2",
    )
    spec, data = linked_chart(at)
    assert [len(frame) for frame in data] == [
        attention(reverse_checkpoint, s).attention.cross[0, 1].size for s in ("a b c", "d e f g h")
    ]
    view = spec["concat"][0]
    assert "쿼리" in view["encoding"]["y"]["axis"]["title"]  # "생성한 타깃 (쿼리)": the produced target's tokens
    assert view["encoding"]["color"]["legend"]["title"] == "가중치"
