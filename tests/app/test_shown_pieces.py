"""Words and pieces as a reader sees them: no SentencePiece "▁" in labels or quoting sentences by default, the
marker one switch away on Translate ("pieces as the model sees them"), and Translate's source sentence shown as
text beside its translation."""

from __future__ import annotations

import json

import numpy as np

from explorer.checkpoint import load_checkpoint
from explorer.figures.attention import attention_heatmap
from explorer.figures.positional import embedding_norms_figure
from explorer.figures.tour_attention import heads_figure
from explorer.inference import translate
from explorer.text.pieces import SPACE_SHOWN, shown_piece, shown_pieces
from tests.apptest_helpers import chart, open_page
from ui.attention_view import attention_view
from ui.markdown import md_escape

MARK = "\u2581"
SENTENCE = "a small child sees the red dog ."


def translation(words_checkpoint):
    ck = load_checkpoint(words_checkpoint)
    return translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True)[0]


def ticks(figure: dict, axis: str) -> list[str]:
    return list(figure["layout"][axis]["ticktext"])


def test_a_piece_is_shown_without_its_word_start_marker():
    assert shown_pieces([f"{MARK}Ein", f"{MARK}Hund", "e", ".", "</s>"]) == ["Ein", "Hund", "e", ".", "</s>"]
    assert shown_piece(MARK) == SPACE_SHOWN, "a lone marker piece is a visible space, never an empty label"
    assert shown_pieces([f"{MARK}Ein", "e"], marker=True) == [f"{MARK}Ein", "e"], "as the model sees them"
    assert shown_pieces([f"{MARK}a", "a"]) == ["a", "a"], "repeats stay, one label per piece"


def test_heatmap_ticks_have_no_marker_by_default_and_have_it_with_the_switch(words_checkpoint):
    t = translation(words_checkpoint)
    assert any(p.startswith(MARK) for p in t.source_pieces), "the fixture's pieces carry the marker"
    for marker in (False, True):
        view = attention_view(t, "cross", marker=marker)
        fig = attention_heatmap(view.weights[0, 0], view.query_labels, view.key_labels).to_plotly_json()
        labels = list(fig["layout"]["xaxis"]["ticktext"]) + list(fig["layout"]["yaxis"]["ticktext"])
        assert any(MARK in label for label in labels) is marker, labels
        # Positions, not labels, index the axes: a repeated word keeps its own column either way.
        assert list(fig["layout"]["xaxis"]["tickvals"]) == list(range(len(t.source_pieces)))


def test_tour_and_positional_figures_show_no_marker(words_checkpoint):
    t = translation(words_checkpoint)
    n = len(t.source_pieces)
    heads = heads_figure(
        np.full((2, n, n), 1 / n), t.source_pieces, t.source_pieces, masked=False, title="x"
    ).to_plotly_json()
    norms = embedding_norms_figure(np.ones(n), np.ones(n), np.ones(n), t.source_pieces).to_plotly_json()
    labels = [*ticks(heads, "xaxis"), *ticks(heads, "yaxis"), *ticks(norms, "xaxis")]
    assert labels and not any(MARK in label for label in labels), labels


def test_translate_shows_the_source_beside_the_translation_and_no_marker(checkpoint_root, words_checkpoint):
    at = open_page("pages/translate.py", model="words-fixture", sentence=SENTENCE, family="cross", mode="head")
    t = translation(words_checkpoint)
    # The source as text in the main area, in the column beside the translation's.
    pair = [c for c in at.main.columns if [m.value for m in c.markdown]]
    shown = [[m.value for m in c.markdown] for c in pair]
    assert [f"### {md_escape(SENTENCE)} →"] in shown, shown
    assert [f"## {md_escape(t.output)}"] in shown, shown
    left = shown.index([f"### {md_escape(SENTENCE)} →"])
    assert shown[left + 1] == [f"## {md_escape(t.output)}"], "the translation sits right beside its source"
    figure = chart(at, "translate_head")
    assert not any(MARK in label for label in ticks(figure, "xaxis") + ticks(figure, "yaxis"))
    # The teaching switch: the pieces as the model sees them (bound to ?marker=, as every view setting).
    at.toggle(key="marker").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    figure = chart(at, "translate_head")
    assert ticks(figure, "xaxis") == [p.replace("<", "&lt;").replace(">", "&gt;") for p in t.source_pieces]


def test_step_by_step_quotes_and_labels_tokens_without_marker(checkpoint_root, words_checkpoint):
    pieces = translation(words_checkpoint).source_pieces
    query = next(i for i, p in enumerate(pieces) if i and p.startswith(MARK) and len(p) > 1)  # "▁red", say
    at = open_page(
        "pages/step_by_step.py",
        model="words-fixture",
        state=dict(sbs_sentence=SENTENCE, sbs_family="encoder_self", sbs_query=query),
    )
    word = pieces[query][1:]
    assert any(f"query **{md_escape(word)}**" in m.value for m in at.markdown), [m.value for m in at.markdown][:3]
    texts = [m.value for m in at.markdown] + [str(o) for o in at.pills(key="sbs_query").options]
    assert not any(MARK in text for text in texts)
    row = chart(at, "sbs_row")
    assert f"“{word}”" in row["layout"]["title"]["text"] and not any(MARK in label for label in ticks(row, "xaxis"))


def test_tour_exercise_quotes_the_produced_word_without_marker(checkpoint_root):
    at = open_page("pages/tour.py", model="words-fixture", tour_sentence=SENTENCE, stop="3", lang="en")
    assert not at.exception, [e.message for e in at.exception]
    question = [m.value for m in at.markdown if "when the decoder produces" in m.value]
    assert question and MARK not in question[0], question


def _train_attention_script() -> None:
    """The Train page's "Watch attention form" section over a two-snapshot run whose pieces carry the marker."""
    from pathlib import Path

    import numpy as np

    from explorer.training.callbacks import SampleTranslation
    from explorer.training.run_folder import RunSnapshot
    from explorer.training.snapshots import AttentionSnapshot
    from ui.train.attention import attention_section

    mark = "\u2581"
    source, output = [f"{mark}a", f"{mark}dog", "s", "</s>"], [f"{mark}Hund", "e", "</s>"]

    def snapshot(step: int) -> AttentionSnapshot:
        weights = np.full((1, 1, len(output), len(source)), 1 / len(source), dtype=np.float32)
        return AttentionSnapshot(step, (SampleTranslation("a dogs", "Hunde", source, output, weights),))

    attention_section(
        RunSnapshot(
            status="finished",
            checkpoint_step=10,
            total_steps=10,
            name="run",
            run_dir=Path("."),
            step=10,
            resumed_from=0,
            elapsed_s=1.0,
            history={},
            attention=(snapshot(0), snapshot(10)),
            saved=(),
            error=None,
            d_model=8,
            warmup_steps=1,
            lr_scale=1.0,
            sample_sentences=("a dogs",),
            eta=None,
            log="",
            owner="cli",
        )
    )


def test_train_attention_snapshots_show_no_marker():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_train_attention_script, default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(figures) == 2, "the snapshot's heatmap and the evolution panels"
    labels = [
        label
        for figure in figures
        for name, axis in figure["layout"].items()
        if name.startswith(("xaxis", "yaxis")) and "ticktext" in axis
        for label in axis["ticktext"]
    ]
    assert "Hund" in labels and "dog" in labels, labels
    assert not any(MARK in label for label in labels), labels


def test_beam_hypothesis_attention_labels_show_no_marker(checkpoint_root):
    at = open_page("pages/beam.py", model="words-fixture", beam_sentence=SENTENCE, lang="en")
    figure = chart(at, "beam_attention")
    labels = ticks(figure, "xaxis") + ticks(figure, "yaxis")
    assert "ma" in labels, labels  # "small" is "▁s", "ma", "l", "l" to the fixture's tokenizer
    assert not any(MARK in label for label in labels), labels
