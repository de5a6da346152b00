"""The translate & attention page, run through app.py on the fixture checkpoints, and its helpers."""

from __future__ import annotations

import csv
import dataclasses
import inspect
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.decoding import output_loop
from explorer.figures.export import find_browser
from explorer.figures.theme import escape_labels
from explorer.inference import translate
from explorer.text.pieces import shown_pieces
from tests.apptest_helpers import charts, open_page, plotly_array, query_value
from ui.attention_view import (
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_LINES,
    NATURAL_EXAMPLES,
    SYMBOL_EXAMPLES,
    attention_view,
    data_kind,
    example_sentences,
    rows_to_delimited,
)
from ui.markdown import md_escape

REPO = Path(__file__).resolve().parents[2]
PAGE = "pages/translate.py"
WORDS_SENTENCE = "a small child sees the red dog ."


def engine(checkpoint_dir: Path, sentences: list[str], **options):
    ck = load_checkpoint(checkpoint_dir)
    return translate(ck.model, ck.tokenizer, sentences, **options)


def shown_translations(at) -> list[str]:
    return [m.value.removeprefix("## ") for m in at.markdown if m.value.startswith("## ")]


# --- helpers (no streamlit) -----------------------------------------------------------------------------------


def test_examples_follow_checkpoint_metadata():
    assert data_kind({"data": "reverse"}) == "reverse" and data_kind({"fixture": "reverse"}) == "reverse"
    assert example_sentences({"data": "copy"}) == SYMBOL_EXAMPLES
    assert example_sentences({"data": "multi30k"}) == NATURAL_EXAMPLES
    assert example_sentences({}) == NATURAL_EXAMPLES
    assert "A man is riding a bike." in NATURAL_EXAMPLES and "a b c d e f g" in SYMBOL_EXAMPLES


def test_attention_view_labels_and_word_merge(words_checkpoint):
    t = engine(words_checkpoint, [WORDS_SENTENCE], with_attention=True)[0]
    cross = attention_view(t, "cross")
    assert cross.query_labels == shown_pieces(t.target_output_pieces)
    assert cross.key_labels == shown_pieces(t.source_pieces)
    assert not any("\u2581" in label for label in cross.query_labels + cross.key_labels), "no word-start marker"
    model = attention_view(t, "cross", marker=True)  # as the model sees them
    assert model.query_labels == t.target_output_pieces and model.key_labels == t.source_pieces
    assert cross.weights.shape[-2:] == (len(t.target_output_pieces), len(t.source_pieces))
    dec = attention_view(t, "decoder_self")
    assert dec.query_labels == shown_pieces(t.target_input_pieces) and dec.query_labels[0] == "<s>"
    words = attention_view(t, "encoder_self", "words")
    assert words.key_labels == ["a", "small", "child", "sees", "the", "red", "dog", ".", "</s>"]
    assert len(words.key_labels) < len(t.source_pieces), "the fixture's vocabulary should split some words"
    np.testing.assert_allclose(words.weights.sum(-1), 1.0, atol=1e-5)


def test_result_rows_to_csv_and_tsv_round_trip():
    rows = [{"#": 1, "source": 'say "hi", then\ttab', "translation": "x", "score": -0.5, "truncated": False}]
    for delimiter in (",", "\t"):
        back = list(csv.DictReader(io.StringIO(rows_to_delimited(rows, delimiter)), delimiter=delimiter))
        assert back[0]["source"] == 'say "hi", then\ttab' and back[0]["score"] == "-0.5"
    assert rows_to_delimited([]) == ""


def test_markdown_escape_keeps_text_literal():
    assert md_escape("*a* [b](c) #1 <s>") == r"\*a\* \[b\]\(c\) \#1 \<s\>"


# --- the page -------------------------------------------------------------------------------------------------


def test_typed_sentence_translation_equals_engine(checkpoint_root, words_checkpoint):
    at = open_page(PAGE, model="words-fixture")
    sentence = "the dog walks in the park ."
    at.text_input(key="sentence").set_value(sentence).run()
    assert not at.exception
    expected = engine(words_checkpoint, [sentence])[0].output
    assert shown_translations(at) == [md_escape(expected)]


def test_example_sentence_is_one_click_away(checkpoint_root, reverse_checkpoint):
    at = open_page(PAGE, model="reverse-fixture")
    at.pills(key="sentence_example").set_value(SYMBOL_EXAMPLES[2]).run()
    assert not at.exception
    assert at.text_input(key="sentence").value == SYMBOL_EXAMPLES[2]
    assert shown_translations(at) == [md_escape(engine(reverse_checkpoint, [SYMBOL_EXAMPLES[2]])[0].output)]


def test_beam_translation_equals_engine(checkpoint_root, words_checkpoint):
    at = open_page(PAGE, model="words-fixture", beam="3", sentence=WORDS_SENTENCE)
    expected = engine(words_checkpoint, [WORDS_SENTENCE], beam_size=3, alpha=0.6)[0].output
    assert shown_translations(at) == [md_escape(expected)]
    assert any("beam search, 3 beams" in c.value for c in at.caption)


def test_grid_has_one_heatmap_per_layer_and_head(checkpoint_root, words_checkpoint):
    """The grid is the linked Altair chart: one facet per layer and head, one hover selection."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    at = open_page(PAGE, model="words-fixture", sentence=WORDS_SENTENCE, mode="grid", family="encoder_self")
    config = load_checkpoint(words_checkpoint).config
    (chart,) = at.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    assert [p["name"] for p in spec["params"]] == ["query_hover"]
    (data,) = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets]
    assert data.groupby(["layer", "head"]).ngroups == config.n_encoder_layers * config.n_heads
    expected = engine(words_checkpoint, [WORDS_SENTENCE], with_attention=True)[0].attention.encoder_self[-1, -1]
    last = data[data["name"] == f"Layer {config.n_encoder_layers} \u00b7 Head {config.n_heads}"]
    np.testing.assert_allclose(
        last.sort_values(["query", "key"])["weight"].to_numpy().reshape(expected.shape), expected, atol=1e-5
    )
    # The per-head captions table lists every head.
    assert len(at.dataframe[0].value) == config.n_encoder_layers * config.n_heads


def test_url_restores_layer_head_and_family(checkpoint_root, words_checkpoint):
    at = open_page(
        PAGE, model="words-fixture", sentence=WORDS_SENTENCE, family="cross", layer="2", head="2", mode="head"
    )
    assert at.segmented_control(key="layer").value == 2 and at.segmented_control(key="head").value == 2
    assert at.radio(key="family").value == "cross"
    (fig,) = charts(at, "translate_head")
    t = engine(words_checkpoint, [WORDS_SENTENCE], with_attention=True)[0]
    np.testing.assert_allclose(plotly_array(fig["data"][0]["z"]), t.attention.cross[1, 1], atol=1e-5)
    # Rows are queries (target pieces), columns are keys (source pieces).
    assert fig["layout"]["yaxis"]["ticktext"] == escape_labels(shown_pieces(t.target_output_pieces))
    assert fig["layout"]["xaxis"]["ticktext"] == escape_labels(shown_pieces(t.source_pieces))
    assert "layer 2" in fig["layout"]["title"]["text"] and "head 2" in fig["layout"]["title"]["text"]
    assert any("Layer 2, head 2" in m.value for m in at.markdown), "the head's caption is shown"
    # Download buttons (PNG and SVG) sit under the figure; without a local Chromium a caption says why not.
    if find_browser() is None:
        assert any("needs a local Chromium" in c.value for c in at.caption)
    else:
        assert {"translate_head__png", "translate_head__svg"} <= {b.key for b in at.get("download_button")}

    # Changing the family updates the URL, so the view can be linked from a slide (plain values such as the
    # head are bound with bind="query-params"; the browser writes those, see tests/browser/test_pages.py).
    at.radio(key="family").set_value("encoder_self").run()
    assert query_value(at, "family") == "encoder_self"


def test_words_mode_mean_and_head_view(checkpoint_root, words_checkpoint):
    at = open_page(
        PAGE,
        model="words-fixture",
        sentence=WORDS_SENTENCE,
        family="encoder_self",
        units="words",
        mode="mean",
        layer="1",
        stretch="True",
    )
    (fig,) = charts(at, "translate_mean")
    assert fig["layout"]["xaxis"]["ticktext"][:3] == ["a", "small", "child"]
    t = engine(words_checkpoint, [WORDS_SENTENCE], with_attention=True)[0]
    expected = attention_view(t, "encoder_self", "words").weights[0].mean(axis=0)
    np.testing.assert_allclose(plotly_array(fig["data"][0]["z"]), expected, atol=1e-5)
    assert fig["data"][0]["zmax"] == pytest.approx(float(expected.max()), abs=1e-5), "stretched colour scale"

    at.radio(key="mode").set_value("lines").run()
    at.pills(key="heads").set_value([2]).run()
    assert not at.exception
    (lines,) = charts(at, "translate_lines")
    heads_drawn = {trace["meta"]["head"] for trace in lines["data"] if "meta" in trace}
    assert heads_drawn == {1}, "only head 2 (index 1) is switched on"


def test_empty_sentence_gives_a_friendly_message(checkpoint_root):
    at = open_page(PAGE, model="reverse-fixture")
    at.text_input(key="sentence").set_value("   ").run()
    assert not at.exception
    assert any("Type a sentence" in i.value for i in at.info)
    assert not charts(at)


def test_overlong_sentence_is_truncated_with_a_warning(checkpoint_root, reverse_checkpoint):
    long = " ".join(["a", "b", "c", "d"] * 20)
    at = open_page(PAGE, model="reverse-fixture", sentence=long)
    assert any("longer than this model reads" in w.value for w in at.warning)
    assert shown_translations(at) == [md_escape(engine(reverse_checkpoint, [long])[0].output)]
    assert charts(at, "translate_head")


def upload(at, name: str, data: bytes):
    at.file_uploader(key="upload").upload(name, data, "text/plain").run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("empty.txt", b"", "is empty"),
        ("blank.txt", b"\n  \n\n", "has no sentences (only blank lines)"),
        ("latin1.txt", "Ein Mädchen\n".encode("latin-1"), "not valid UTF-8"),
        ("image.txt", bytes(range(256)) * 4, "binary"),
        ("many.txt", b"a b\n" * (MAX_UPLOAD_LINES + 1), f"the limit is {MAX_UPLOAD_LINES}"),
    ],
)
def test_bad_uploads_are_rejected_with_a_message(checkpoint_root, name, data, message):
    at = open_page(PAGE, model="reverse-fixture", input="file")
    upload(at, name, data)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0] and name in errors[0], errors
    assert not at.dataframe


def test_upload_translates_a_batch(checkpoint_root, reverse_checkpoint):
    lines = ["a b c", "", "d e f g", " ".join("abcdefgh" * 8)]
    at = open_page(PAGE, model="reverse-fixture", input="file")
    upload(at, "batch.txt", "\n".join(lines).encode())
    sentences = [line.strip() for line in lines if line.strip()]
    expected = engine(reverse_checkpoint, sentences)
    table = at.dataframe[0].value
    assert list(table["source"]) == sentences
    assert list(table["translation"]) == [t.output for t in expected]
    assert list(table["truncated"]) == [False, False, True]
    assert any("sentence 3 " in w.value for w in at.warning)
    # The chosen row is looked at in detail.
    at.selectbox(key="row").set_value(1).run()
    assert shown_translations(at) == [md_escape(expected[1].output)]
    assert charts(at, "translate_head")


# --- decoding settings stored with the model, several sentences, repeated phrases -------

THREE = "a man rides a bicycle . the dog walks in the park . a small child sees the red dog ."
THREE_PARTS = ["a man rides a bicycle .", "the dog walks in the park .", "a small child sees the red dog ."]


@pytest.fixture
def stored_decoding_root(checkpoint_root, tmp_path, monkeypatch) -> Path:
    """A checkpoints/ folder with the words fixture that stores beam 3, α 1.2 (as a validation sweep would)."""
    path = tmp_path / "stored-decoding"
    shutil.copytree(checkpoint_root / "words-fixture", path)
    data = json.loads((path / "config.json").read_text())
    data["metadata"]["decoding"] = {"beam": 3, "alpha": 1.2}
    (path / "config.json").write_text(json.dumps(data))
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(tmp_path))
    return path


def test_decoding_defaults_come_from_the_checkpoint_and_are_shown(stored_decoding_root):
    at = open_page(PAGE, model="stored-decoding", sentence=WORDS_SENTENCE)
    assert at.select_slider(key="beam").value == 3 and at.select_slider(key="alpha").value == 1.2
    expected = engine(stored_decoding_root, [WORDS_SENTENCE], beam_size=3, alpha=1.2)[0].output
    assert shown_translations(at) == [md_escape(expected)]
    assert any("beam search, 3 beams, α = 1.2" in c.value for c in at.caption)
    note = "Decoding: beam 3, α 1.2 — chosen on validation, stored with the model."
    # In the sidebar twice: under the beam and α sliders, and in the model picker. Not in the main area, whose
    # height the attention figure needs at 1024x768 (the translation's line says the beam and α in use).
    assert sum(c.value == note for c in at.sidebar.caption) == 2
    assert not any(c.value == note for c in at.main.caption)
    # A choice of the user's own still wins, and the stored note stays to compare with.
    at.select_slider(key="beam").set_value(1).run()
    assert shown_translations(at) == [md_escape(engine(stored_decoding_root, [WORDS_SENTENCE])[0].output)]
    assert sum(c.value == note for c in at.sidebar.caption) == 2


def test_without_stored_settings_the_page_starts_greedy(checkpoint_root):
    at = open_page(PAGE, model="words-fixture", sentence=WORDS_SENTENCE)
    assert at.select_slider(key="beam").value == 1 and at.select_slider(key="alpha").value == 0.6
    assert not [c for c in at.caption if "stored with the model" in c.value]


def test_three_sentences_are_translated_alone_and_picked_one_at_a_time(checkpoint_root, words_checkpoint):
    at = open_page(PAGE, model="words-fixture", sentence=THREE, family="cross", mode="head")
    alone = [engine(words_checkpoint, [s], with_attention=True)[0] for s in THREE_PARTS]
    assert shown_translations(at) == [md_escape(" ".join(t.output for t in alone))]
    picker = at.selectbox(key="part")
    assert picker.options == [f"Sentence {i} of 3: {s}" for i, s in enumerate(THREE_PARTS, start=1)]
    layers = alone[0].attention.cross.shape[0]
    (fig,) = charts(at, "translate_head")
    np.testing.assert_allclose(plotly_array(fig["data"][0]["z"]), alone[0].attention.cross[layers - 1, 0], atol=1e-5)
    picker.set_value(1).run()
    assert not at.exception
    (fig,) = charts(at, "translate_head")
    np.testing.assert_allclose(plotly_array(fig["data"][0]["z"]), alone[1].attention.cross[layers - 1, 0], atol=1e-5)
    assert fig["layout"]["xaxis"]["ticktext"] == escape_labels(shown_pieces(alone[1].source_pieces))
    assert shown_translations(at) == [md_escape(" ".join(t.output for t in alone))], "the line's card stays"


def test_one_sentence_has_no_sentence_picker(checkpoint_root):
    at = open_page(PAGE, model="words-fixture", sentence="Mr. Smith sees the dog")
    assert "part" not in [s.key for s in at.selectbox]


def test_uploaded_lines_of_several_sentences_are_joined(checkpoint_root, words_checkpoint):
    at = open_page(PAGE, model="words-fixture", input="file")
    upload(at, "three.txt", f"{THREE}\n{WORDS_SENTENCE}\n".encode())
    table = at.dataframe[0].value
    alone = {s: engine(words_checkpoint, [s])[0].output for s in [*THREE_PARTS, WORDS_SENTENCE]}
    assert list(table["source"]) == [THREE, WORDS_SENTENCE]
    assert list(table["translation"]) == [" ".join(alone[s] for s in THREE_PARTS), alone[WORDS_SENTENCE]]
    assert "repeated" in table.columns
    assert at.selectbox(key="part").options[2] == f"Sentence 3 of 3: {THREE_PARTS[2]}"


def test_a_looping_output_is_marked(checkpoint_root, reverse_checkpoint, monkeypatch):
    """Whatever the fixture says, an output that repeats a phrase three times in a row gets a warning."""
    import explorer.serving

    real = explorer.serving.translate
    sentence = "b a d c a b"

    def looping(*args, **kwargs):
        return [dataclasses.replace(t, output="x y x y x y z") for t in real(*args, **kwargs)]

    monkeypatch.setattr(explorer.serving, "translate", looping)
    at = open_page(PAGE, model="reverse-fixture", sentence=sentence, beam="2")
    warnings = [w.value for w in at.warning if "in a row" in w.value]
    assert warnings == [
        "The translation repeats “x y” 3 times in a row: the search is stuck in a loop, which "
        "happens out of the model's domain. The settings can forbid repeated phrases."
    ]
    monkeypatch.undo()
    at = open_page(PAGE, model="reverse-fixture", sentence=sentence, beam="3")
    alone = engine(reverse_checkpoint, [sentence], beam_size=3)[0]
    loops = output_loop(alone.output, alone.target_output_pieces) is not None
    assert bool([w for w in at.warning if "in a row" in w.value]) == loops


@pytest.mark.skipif(
    "no_repeat_ngram" not in inspect.signature(translate).parameters,
    reason="explorer.inference.translate does not pass no_repeat_ngram to the search yet",
)
def test_no_repeat_constraint_shows_what_it_changes(checkpoint_root, reverse_checkpoint):
    sentence = "a b c"
    at = open_page(PAGE, model="reverse-fixture", sentence=sentence)
    assert at.segmented_control(key="no_repeat").value == 0, "off by default"
    at.segmented_control(key="no_repeat").set_value(2).run()
    assert not at.exception
    constrained = engine(reverse_checkpoint, [sentence], no_repeat_ngram=2)[0].output
    plain = engine(reverse_checkpoint, [sentence])[0].output
    assert shown_translations(at) == [md_escape(constrained)]
    shown_plain = [i.value for i in at.info if "Without the constraint" in i.value]
    if plain != constrained:
        assert shown_plain == [f"Without the constraint the search gives: {md_escape(plain)}"]
    else:
        assert not shown_plain and any("changes nothing" in c.value for c in at.caption)
    assert query_value(at, "no_repeat") == "2", "the view can be linked"
    linked = open_page(PAGE, model="reverse-fixture", sentence=sentence, no_repeat="2")
    assert linked.segmented_control(key="no_repeat").value == 2, "a link can switch it on"
    assert shown_translations(linked) == [md_escape(constrained)]


def test_three_sentences_in_korean(checkpoint_root):
    at = open_page(PAGE, model="words-fixture", sentence=THREE, lang="ko")
    assert at.selectbox(key="part").options[0] == f"문장 1 / 3: {THREE_PARTS[0]}"
    assert any("문장 3개를 각각 따로 번역해" in c.value for c in at.caption)


def test_the_upload_box_states_the_limit_its_caption_states(checkpoint_root):
    """The box said "50MB per file" (the server's limit) under a caption of 1024 KB: the box takes the caption's."""
    at = open_page(PAGE, model="reverse-fixture", input="file")
    (box,) = [e for e in at.get("file_uploader") if e.proto.label.startswith("A text file")]
    assert box.proto.max_upload_size_mb == MAX_UPLOAD_BYTES // (1024 * 1024)
    assert any(f"{MAX_UPLOAD_BYTES // 1024} KB" in c.value for c in at.caption)
