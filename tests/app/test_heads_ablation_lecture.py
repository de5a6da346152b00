"""The Heads page's ablation as a lecturer uses it: the head switches beside the figure, an all-off layer said in
words, a re-decoding with heads off that stops near the original's length, long outputs with readable axes, and
counts worded for one head in English and Korean."""

from __future__ import annotations

import shutil

import pytest

import ui.heads.ablation
from explorer.checkpoint import load_checkpoint
from explorer.inference import EXTRA_OUTPUT_TOKENS, Translation, translate
from tests.apptest_helpers import chart, open_page
from ui.heads.ablation import ABLATION_MARGIN

PAGE = "pages/heads.py"
SENTENCE = "a b c d e f g"  # the reverse fixture repeats "b" to the length limit: a long output


def test_the_head_switches_sit_beside_the_figure(checkpoint_root, one_torch_thread):
    """The switches of the family the figure shows share its row (the others follow below the figure)."""
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="cross.0.0")
    (figure_column,) = [c for c in at.main.columns if c.get("plotly_chart")]
    beside = [c for c in at.main.columns if any(box.key.startswith("hm_cross_") for box in c.get("checkbox"))]
    assert len(beside) == 1 and not figure_column.get("checkbox") and not beside[0].get("plotly_chart")
    assert figure_column.weight + beside[0].weight == pytest.approx(1.0), "one row: the figure and its switches"
    assert len(beside[0].get("checkbox")) == 4, "the shown family's switches (2 layers x 2 heads), nothing else"
    assert at.radio(key="h_family").value == "cross"


def test_narrow_panels_are_titled_by_number():
    import numpy as np

    from explorer.figures.heads import layer_heads

    weights = np.full((4, 3, 3), 1 / 3)
    narrow = layer_heads(weights, [True, False, False, False], list("abc"), list("xyz"), width=400)
    wide = layer_heads(weights, [True, False, False, False], list("abc"), list("xyz"), width=1200)
    assert [a.text for a in narrow.layout.annotations][:4] == ["1 · off", "2", "3", "4"]
    assert [a.text for a in wide.layout.annotations][:4] == ["Head 1 · off", "Head 2", "Head 3", "Head 4"]


def test_an_all_off_layer_says_so(checkpoint_root, one_torch_thread):
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="cross.1.0,cross.1.1", lang="ko")
    notes = [i.value for i in at.info if "모두 꺼져" in i.value]
    assert len(notes) == 1 and "2" in notes[0], [i.value for i in at.info]
    assert not [c for c in at.get("plotly_chart") if c.key == "heads_remaining"]


@pytest.mark.parametrize(
    "lang, one, none_off", [("en", "1 head off", "No head off yet"), ("ko", "헤드 1개 끔", "아직 끈 헤드가 없습니다")]
)
def test_counts_read_right_for_one_head_and_for_none(checkpoint_root, one_torch_thread, lang, one, none_off):
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="cross.0.0", lang=lang)
    captions = [c.value for c in at.caption]
    assert any(c.startswith(one) for c in captions) and not any("1 heads" in c for c in captions), captions
    clean = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, lang=lang)
    cards = [c.value for c in clean.caption][:3]
    assert cards[0] != cards[1] and cards[1].startswith(none_off), cards


def test_decoding_with_heads_off_stops_near_the_original(checkpoint_root, one_torch_thread, monkeypatch, tmp_path):
    """The re-decoding is given a length limit: the original's output plus a margin, within input + 50."""
    sentence = "a small child sees the red dog ."
    # A copy under its own name: the words fixture's page state stays as the importance tests expect it.
    shutil.copytree(checkpoint_root / "words-fixture", tmp_path / "words-copy")
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(tmp_path))
    checkpoint = load_checkpoint(tmp_path / "words-copy")
    (original,) = translate(checkpoint.model, checkpoint.tokenizer, [sentence])
    calls: list[tuple[int, Translation]] = []

    def spy(*args, **kwargs):
        result = translate(*args, **kwargs)
        calls.append((kwargs["max_extra_tokens"], result[0]))
        return result

    monkeypatch.setattr(ui.heads.ablation, "translate", spy)
    open_page(PAGE, model="words-copy", h_sentence=sentence, heads="cross.0.0,cross.0.1,dec.0.0,dec.0.1")
    expected = max(1, min(EXTRA_OUTPUT_TOKENS, len(original.output_ids) + ABLATION_MARGIN - len(original.source_ids)))
    assert [limit for limit, _ in calls] == [expected]
    ((_, ablated),) = calls
    assert len(ablated.output_ids) <= max(len(original.output_ids) + ABLATION_MARGIN, len(original.source_ids) + 1)


def test_a_long_output_names_every_nth_token(checkpoint_root, one_torch_thread):
    """With heads off the reverse fixture repeats a piece to the limit: 58 rows in 380 px stacked their labels."""
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="cross.0.0")
    figure = chart(at, "heads_remaining")
    rows = (
        len(figure["data"][0]["y"]["bdata"])
        if isinstance(figure["data"][0]["y"], dict)
        else len(figure["data"][0]["y"])
    )
    axis = figure["layout"]["yaxis"]
    plot_px = figure["layout"]["height"] - 220
    assert rows > 40, "a long output"
    assert len(axis["ticktext"]) < rows and len(axis["ticktext"]) * 22 <= plot_px, (len(axis["ticktext"]), plot_px)
