"""The tour page through the app's page list: every stop runs and draws a live chart from the loaded model,
the formulas are LaTeX, the stop is in the URL, and the links carry the state."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from explorer.tour import numbers
from explorer.tour.stops import STOPS
from tests.apptest_helpers import chart, open_page, plotly_array
from ui.pages import PAGES
from ui.tour.guesses import decode_guesses, encode_guesses
from ui.tour.links import STOP_PAGES

PAGE = "pages/tour.py"
SENTENCE = "a small child sees the red dog ."


def heading(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("##### "))


def open_tour(**params: str):
    return open_page(PAGE, model="words-fixture", tour_sentence=SENTENCE, **params)


def test_tour_is_the_start_page():
    assert PAGES[0].file == PAGE and PAGES[0].title == "Tour of the paper"


@pytest.mark.slow
def test_next_walks_every_stop_with_a_live_chart_and_latex(checkpoint_root):
    at = open_tour()
    for stop in STOPS:
        assert heading(at).startswith(f"##### {stop.number}/{len(STOPS)}"), heading(at)
        figure = chart(at, f"tour_figure_{stop.key}")
        assert figure["data"], f"stop {stop.number} drew an empty chart"
        assert len(at.latex) == len(stop.formulas) >= 1, f"stop {stop.number}: formulas must be st.latex"
        assert [e.key for e in at.button if e.key == "tour_prev"] == (["tour_prev"] if stop.number > 1 else [])
        if stop.number < len(STOPS):
            at.button(key="tour_next").click().run()
            assert not at.exception, [e.message for e in at.exception]
    assert not [b for b in at.button if b.key == "tour_next"], "the last stop has no Next"


def test_picker_and_url_choose_the_stop(checkpoint_root):
    at = open_tour(stop="4")
    assert heading(at).startswith("##### 4/10")
    # The browser writes a bound widget's value into the URL (?stop=7); AppTest has no browser, so only the
    # URL -> page direction is checked here.
    at.pagination(key="stop").set_value(7).run()
    assert heading(at).startswith("##### 7/10")
    at.button(key="tour_prev").click().run()
    assert heading(at).startswith("##### 6/10")


def test_figures_are_computed_from_the_loaded_model(checkpoint_root, words_checkpoint):
    ck = load_checkpoint(words_checkpoint)
    tr = translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True)[0]
    at = open_tour(stop="2", ex="sqrt_dk:0.9")  # the unscaled weights wait for the exercise's guess
    shown = plotly_array(chart(at, "tour_figure_scaled_dot_product")["data"][0]["z"])
    np.testing.assert_allclose(shown, numbers.scaled_head(ck.model, tr, 0, 0).scaled_weights, atol=1e-6)
    at.toggle(key="tour_sdp_scaled").set_value(False).run()
    shown = plotly_array(chart(at, "tour_figure_scaled_dot_product")["data"][0]["z"])
    np.testing.assert_allclose(shown, numbers.scaled_head(ck.model, tr, 0, 0).unscaled_weights, atol=1e-6)

    at.pagination(key="stop").set_value(1).run()
    at.selectbox(key="tour_block").set_value("dec_ffn").run()
    block = numbers.block_tensors(ck.model, tr, 0)["dec_ffn"]
    [table] = [d for d in at.dataframe if "[0]" in d.value.columns]
    np.testing.assert_allclose(table.value["[0]"].to_numpy(), np.round(block.values[:, 0], 3), atol=1e-9)


def test_open_in_full_page_link_carries_the_state(checkpoint_root):
    at = open_tour(stop="2", lang="en")
    at.button_group(key="tour_sdp_head").set_value(2).run()
    [link] = [m.value for m in at.markdown if "Open in the full page" in m.value]
    url = urlparse(link[link.index("](") + 2 : -1])
    query = parse_qs(url.query)
    assert url.path == "/step_by_step"
    assert query["sbs_sentence"] == [SENTENCE] and query["sbs_head"] == ["2"] and query["sbs_layer"] == ["1"]
    assert query["model"] == ["words-fixture"] and query["lang"] == ["en"]


def test_the_embeddings_stop_links_to_the_positional_page_s_input_tab(checkpoint_root):
    at = open_tour(stop="4", lang="ko")
    [link] = [m.value for m in at.markdown if "](/positional" in m.value]
    query = parse_qs(urlparse(link[link.index("](") + 2 : -1]).query)
    assert query["pe_part"] == ["input"] and query["pe_sentence"] == [SENTENCE] and query["lang"] == ["ko"]


def test_every_stop_links_to_a_page_of_the_app():
    assert list(STOP_PAGES) == [stop.key for stop in STOPS]
    pages = {spec.file.removeprefix("pages/").removesuffix(".py") for spec in PAGES}
    assert set(STOP_PAGES.values()) <= pages


def test_guesses_round_trip_through_one_url_parameter():
    guesses = {"sqrt_dk": 0.9, "cross_head": "▁dog;:x", "crossover": 300.0}
    assert decode_guesses(encode_guesses(guesses)) == {
        k: (f"{v:g}" if isinstance(v, float) else v) for k, v in guesses.items()
    }
    assert decode_guesses("garbage;;x:") == {"x": ""} and decode_guesses(None) == {}


def test_lecturer_link_with_guesses_reveals_and_scores(checkpoint_root):
    at = open_tour(stop="6", ex="crossover:32;bogus:1;sqrt_dk:7")
    assert at.session_state["tour_guesses"] == {"crossover": 32.0}, "unknown keys and invalid guesses are dropped"
    assert any("the model says 32" in m.value for m in at.success)
    assert any("Score 1/1" in c.value for c in at.caption)


@pytest.mark.slow
def test_variant_training_starts_in_the_background(checkpoint_root, tmp_path, monkeypatch):
    import time

    from explorer.tour.variants import newest_pair
    from explorer.training.launcher import RunManager

    monkeypatch.setenv("EXPLORER_RUNS", str(tmp_path))
    at = open_tour(stop="9")
    assert not [c for c in at.get("plotly_chart") if c.key == "tour_variants_chart_a"]
    started = time.monotonic()
    at.button(key="tour_start_row_a").click().run()
    assert not at.exception, [e.message for e in at.exception]
    manager = RunManager(tmp_path)
    names = newest_pair(manager, "A")
    assert len(names) == 2
    # The page came back while the runs were still training: it does not wait for them.
    assert any(manager.snapshot(n).live for n in names), f"returned after {time.monotonic() - started:.0f} s"
    assert chart(at, "tour_variants_chart_a")["layout"]["title"]["text"].startswith("Row (A)")
    for name in names:
        manager.stop(name)
        manager.wait(name, timeout=120)


def test_tour_in_korean(checkpoint_root):
    at = open_tour(stop="3", lang="ko")
    assert heading(at).startswith("##### 3/10 \u00b7 멀티 헤드 어텐션")
    assert any(m.value.startswith("어텐션 하나 대신") for m in at.markdown)
    assert any("전체 페이지에서 열기" in m.value for m in at.markdown)
