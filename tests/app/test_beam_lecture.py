"""The Beam page as a lecturer opens it: on a sentence where beam search and greedy decoding differ (the
checkpoint's own, found on validation data, else found among its examples), the hypothesis' cross-attention on
the layer Translate opens on, and tables whose columns fit the main area."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.examples import beam_example
from explorer.inference import translate
from tests.apptest_helpers import chart, open_page
from ui.beam.tree import TABLE_PX
from ui.markdown import md_escape

REPO = Path(__file__).resolve().parents[2]
PAGE = "pages/beam.py"
SHIPPED = "multi30k-en-de"


@pytest.fixture
def shipped(monkeypatch):
    """The app pointed at the repository's own checkpoints/ folder."""
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(REPO / "checkpoints"))


def translations(at) -> list[str]:
    """The beam's and greedy's translations, as the page shows them ('## ' lines)."""
    return [m.value.removeprefix("## ") for m in at.main.markdown if m.value.startswith("## ")]


def test_the_page_opens_on_a_sentence_where_beam_and_greedy_differ(shipped, one_torch_thread):
    at = open_page(PAGE, model=SHIPPED)
    sentence = at.text_input(key="beam_sentence").value
    assert sentence == beam_example(REPO / "checkpoints" / SHIPPED)
    own = json.loads((REPO / "checkpoints" / SHIPPED / "examples.json").read_text())["en"]
    offered = list(at.pills(key="beam_sentence_example").options)
    assert len(offered) == len(own) + 1 and md_escape(sentence) in offered[0], "its own examples, this one first"
    beam, greedy = translations(at)
    assert beam != greedy, "the first look shows what the beam is for"
    captions = " ".join(c.value for c in at.caption)
    assert "a different output that ranks higher" in captions and "the same output as greedy" not in captions


def test_the_shipped_beam_example_is_a_validation_sentence():
    data = json.loads((REPO / "checkpoints" / SHIPPED / "examples.json").read_text())
    validation = REPO.parent / "shared" / "data" / "multi30k" / "val.en"
    if not validation.is_file():
        pytest.skip(f"Multi30k not found at {validation.parent}")
    assert data["beam"]["en"] in validation.read_text(encoding="utf-8").splitlines()


def test_without_a_shipped_sentence_the_examples_are_searched(checkpoint_root, one_torch_thread):
    """The words fixture ships none: the page opens on the shortest of its examples where the two differ, if any."""
    from ui.attention_view import example_sentences

    folder = checkpoint_root / "words-fixture"
    checkpoint = load_checkpoint(folder)
    examples = list(example_sentences(checkpoint.metadata))
    greedy = translate(checkpoint.model, checkpoint.tokenizer, examples)
    beam = translate(checkpoint.model, checkpoint.tokenizer, examples, beam_size=4)
    differing = [s for s, g, b in zip(examples, greedy, beam, strict=True) if g.output_ids != b.output_ids]
    at = open_page(PAGE, model="words-fixture")
    opened = at.text_input(key="beam_sentence").value
    if differing:
        assert opened in differing
    else:
        assert opened == examples[0]


def test_hypothesis_attention_opens_on_the_last_layer_as_translate_does(shipped, one_torch_thread):
    at = open_page(PAGE, model=SHIPPED)
    layers = load_checkpoint(REPO / "checkpoints" / SHIPPED).config.n_decoder_layers
    assert at.segmented_control(key="beam_layer").value == layers
    assert f"layer {layers}" in chart(at, "beam_attention")["layout"]["title"]["text"]


def test_the_tables_fit_the_main_area_with_score_and_status(shipped, one_torch_thread):
    at = open_page(PAGE, model=SHIPPED)
    step, nbest = at.dataframe
    for table, needed in ((step, {"score", "status"}), (nbest, {"score"})):
        columns = {name: c for name, c in json.loads(table.proto.columns).items() if not c.get("hidden")}
        assert needed <= set(columns), columns
        assert all("width" in c for c in columns.values()), "every column has its width"
        assert sum(c["width"] for c in columns.values()) <= TABLE_PX, columns


def test_tour_stop_8_shows_the_beam_pages_sentence_where_the_beam_changes_the_score(shipped, one_torch_thread):
    """With the tour's first sentence the four lines of stop 8 were flat: every beam found greedy's output."""
    # After the guess (before it, the figure draws greedy's points alone: tests/app/test_tour_reveal.py).
    at = open_page("pages/tour.py", model=SHIPPED, stop="8", lang="en", ex="beam_changes:yes")
    sentence = beam_example(REPO / "checkpoints" / SHIPPED)
    assert sentence and any(md_escape(sentence) in m.value for m in at.main.markdown), "the stop names its sentence"
    lines = chart(at, "tour_figure_beam_search")["data"]
    assert any(len(set(line["y"])) > 1 for line in lines), "some α's score changes with the beam size"
