"""The new sections under AppTest, in English and in Korean, on the fixture model: word order on the
Positional encoding page, additive attention on the step-by-step page, and the tour's stops that now show
word order (5), the additive trend (2), the kernel-1 convolutions (4), auto-regressive and shifted right with
the averaging fact (1), Adam and dropout (7), Table 2 with its cost (8), and row (A)'s attention (9)."""

from __future__ import annotations

import re

import pytest

from tests.apptest_helpers import chart, open_page, plotly_array

SENTENCE = "a small child sees the red dog ."
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# The fixture's words: "the red dog" and "a small child" swapped are the same pieces in another order.
SWAPPED = "the red dog sees a small child ."


def texts(at) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.info] if isinstance(e.value, str))


def check_word_order(at, prefix: str, lang: str) -> None:
    figure = chart(at, f"{prefix}_wo_figure")
    assert len(figure["data"]) == 4, "original and swapped, with and without positions"
    shown = texts(at)
    if lang == "en":
        assert "**Without positional encoding** the swapped run equals the original run permuted" in shown
    else:
        assert "**위치 인코딩 없이는**" in shown and "나는 밥을 먹는다" in shown
    # The difference without positions is written as float32 rounding, with them as a number of order one.
    without = re.search(r"(\d\.\de-\d\d)", shown)
    assert without is not None and float(without.group(1)) < 1e-5, shown


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_positional_page_swaps_words_with_and_without_positions(lang, checkpoint_root):
    at = open_page(
        "pages/positional.py",
        model="words-fixture",
        lang=lang,
        state={"pe_wo_original": SENTENCE, "pe_wo_swapped": SWAPPED},
        pe_part="word_order",
    )
    check_word_order(at, "pe", lang)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_step_by_step_scores_the_query_additively_beside_the_dot_product(lang, checkpoint_root):
    at = open_page(
        "pages/step_by_step.py", model="words-fixture", lang=lang, sbs_sentence=SENTENCE, sbs_part="additive"
    )
    bars = chart(at, "sbs_additive_query")["data"]
    assert len(bars) == 2 and abs(sum(bars[1]["y"]) - 1) < 1e-6, "the additive weights are a softmax"
    assert len(chart(at, "sbs_additive_saturation")["data"]) == 6, "three scorings, two panels"
    heading = "가법 어텐션 (additive attention)이라면?" if lang == "ko" else "Additive attention instead?"
    assert heading in [h.value for h in at.header]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_tour_stops_show_word_order_additive_conv_recipe_and_table2(lang, checkpoint_root):
    at = open_page(
        "pages/tour.py",
        model="words-fixture",
        lang=lang,
        tour_sentence=SENTENCE,
        stop="5",
        state={"tour_wo_original": SENTENCE, "tour_wo_swapped": SWAPPED},
    )
    check_word_order(at, "tour", lang)
    # Stop 1 last: its block selectbox has translated labels that AppTest cannot map back in a later run.
    expected = {
        2: ("Unscaled q·k saturates",),
        4: ("two convolutions with kernel size 1",),
        7: ("β₁ = 0.9, β₂ = 0.98, ε = 10⁻⁹", "sums of the embeddings and the positional encodings"),
        8: ("Section 6.1 and footnote 5", "41.0", "3.3·10¹⁸"),
        9: ("The paper's row (A): h = 1 is 0.9 BLEU below h = 8",),
        1: ("auto-regressive", "shifted right", "records no averaging"),
    }
    korean = {1: "자기 회귀적", 2: "포화", 4: "합성곱", 7: "드롭아웃", 8: "각주 5", 9: "헤드 1개"}
    for stop, phrases in expected.items():
        at.pagination(key="stop").set_value(stop).run()
        assert not at.exception, [e.message for e in at.exception]
        shown = texts(at)
        if lang == "en":
            assert all(p in shown for p in phrases), (stop, shown)
        else:
            assert korean[stop] in shown, (stop, shown)
        if stop == 8:
            table = next(d.value for d in at.dataframe if "BLEU EN-FR" in d.value.columns)
            assert "ByteNet" in list(table.iloc[:, 0]) and len(table) == 10
        if stop == 9:
            assert len(chart(at, "tour_row_a_attention")["data"]) == 10, "one head, the mean, eight heads"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_tour_shows_rows_b_d_e_beside_the_papers_and_table_4(lang, checkpoint_root):
    at = open_page("pages/tour.py", model="words-fixture", lang=lang, tour_sentence=SENTENCE, stop="9")
    expected = {"B": "d_k = 4", "D": "\u03b5_ls = 0", "E": "learned"}
    for letter, label in expected.items():
        at.segmented_control(key="tour_table3_row").set_value(letter).run()
        assert not at.exception, [e.message for e in at.exception]
        table = at.dataframe[-1].value
        models = list(table.iloc[:, 1])
        assert any(label in m for m in models) and len(table) == 4, "the paper's two rows, then our pair"
        assert set(table["PPL"][2:]) != {"?"}, "our numbers show before the guess; the paper's changed row does not"
        assert table["PPL"][1] == "?"
        shown = texts(at)
        assert (f"Row ({letter})" in shown) if lang == "en" else (f"({letter}) 행" in shown), shown
    lengths = chart(at, "tour_row_e_lengths_stored")["data"]
    assert [trace["name"] for trace in lengths] == ["sinusoidal", "learned"]
    at.pagination(key="stop").set_value(8).run()
    assert not at.exception, [e.message for e in at.exception]
    table4 = next(d.value for d in at.dataframe if "WSJ 23 F1" in d.value.columns)
    assert len(table4) == 12 and 92.7 in list(table4["WSJ 23 F1"])
    shown = texts(at)
    assert ("input + 300" in shown) if lang == "en" else ("구문 분석" in shown and "입력 + 300" in shown), shown


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_positional_page_compares_with_row_es_learned_model(lang, checkpoint_root):
    at = open_page("pages/positional.py", model="words-fixture", lang=lang)
    assert not [c for c in at.get("plotly_chart") if c.key == "pe_side_by_side"], "a sinusoidal model: none by default"
    # A link picks the stored model (AppTest cannot map a translated option label back to its value).
    at = open_page("pages/positional.py", model="words-fixture", lang=lang, pe_learned="stored")
    side = chart(at, "pe_side_by_side")
    assert len(side["data"]) == 2 and plotly_array(side["data"][1]["z"]).shape[1] == 64, "row (E)'s d_model"
    at = open_page("pages/positional.py", model="words-fixture", lang=lang, pe_learned="stored", pe_part="similarity")
    assert chart(at, "pe_learned_similarity")["data"]
