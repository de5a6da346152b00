"""The tour's numbers and the Beam page follow an imported model's config (activation, position layout, length
normalisation, decoding defaults), not the paper's model's: each test fails where a number assumed the paper's."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from explorer.marian.importer import import_marian
from explorer.model import sinusoidal_encoding
from tests.apptest_helpers import chart, open_page, plotly_array
from tests.marian.models import build_marian

NAME = "opus-mt-swish"
SENTENCE = "the big cat sees a small dog"
LONGER = "사람 bread slowly with"  # 15 pieces out of this random model: the two penalties differ


@pytest.fixture(scope="module")
def imported(tmp_path_factory, one_torch_thread):
    root = tmp_path_factory.mktemp("checkpoints")
    built = build_marian(tmp_path_factory.mktemp("hf") / "hf", activation="swish", seed=3)
    import_marian(built.path, root / NAME)
    return root, load_checkpoint(root / NAME)


def test_the_tour_feed_forward_uses_the_models_activation(imported):
    from explorer.tour import numbers

    _, ck = imported
    assert ck.config.activation == "swish"
    translation = translate(ck.model, ck.tokenizer, [SENTENCE])[0]
    activity = numbers.feed_forward_activity(ck.model, translation, 0)
    assert activity.activation == "swish"
    assert activity.hidden.min() < 0, "swish lets negative values through; ReLU would not"
    assert activity.zero_fraction == 0.0
    assert 0.0 < activity.off_fraction < 1.0


def test_the_tour_positions_are_in_the_papers_order_for_a_split_table(imported):
    from explorer.tour import numbers

    _, ck = imported
    assert ck.config.position_layout == "split"
    d = ck.config.d_model
    np.testing.assert_allclose(numbers.positions_of(ck.model, 9), sinusoidal_encoding(9, d).double().numpy(), atol=1e-6)


def test_the_tour_positions_of_our_own_layout_are_the_models_table(reverse_checkpoint):
    from explorer.tour import numbers

    model = load_checkpoint(reverse_checkpoint).model
    assert np.array_equal(numbers.positions_of(model, 5), model.positional_table("source")[:5].double().numpy())


def test_the_tour_beam_grid_divides_by_length_to_the_alpha(imported):
    from explorer.tour import numbers

    _, ck = imported
    rows = numbers.beam_grid(ck.model, ck.tokenizer, LONGER, beams=(1, 2), alphas=(1.0,))
    assert max(row.length for row in rows) > 1
    for row in rows:
        assert row.penalty == pytest.approx(row.length**1.0)
        assert row.score == pytest.approx(row.log_prob / row.length)


def test_the_nbest_lp_column_is_the_penalty_the_search_scored_with(imported):
    from explorer.analysis.beam import nbest_rows

    _, ck = imported
    result = translate(ck.model, ck.tokenizer, [LONGER], beam_size=3, n_best=3, alpha=1.0)[0]
    rows = nbest_rows(result.nbest, ck.tokenizer, 1.0, ck.config.length_normalisation)
    assert max(row["length"] for row in rows) > 1
    for row in rows:
        assert row["lp(length)"] == pytest.approx(float(row["length"]))
        assert row["score"] == pytest.approx(row["log p"] / row["lp(length)"])


def test_the_beam_page_states_the_models_length_penalty(imported, monkeypatch):
    root, _ = imported
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    at = open_page("pages/beam.py", model=NAME, beam_sentence=SENTENCE, lang="en")
    assert any("|Y|^α" in c.value for c in at.caption), "the page says which length penalty this model uses"
    assert any("|Y|^{\\alpha}" in (m.value or "") for m in at.latex)


def test_translate_says_the_decoding_settings_are_the_imported_models_own(imported, monkeypatch):
    root, _ = imported
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    at = open_page("pages/translate.py", model=NAME, sentence=SENTENCE, lang="en")
    notes = [c.value for c in at.caption if c.value.startswith("Decoding: beam")]
    assert notes and all("the imported model's own settings" in note for note in notes), notes


@pytest.mark.parametrize(
    ("lang", "named", "question", "told"),
    [
        ("en", "swish(xW₁ + b₁)", "through swish where the paper has a ReLU", "at or below zero"),
        ("ko", "swish(xW₁ + b₁), 인코더 레이어", "논문의 ReLU 대신 swish", "0 이하입니다"),
    ],
)
def test_tour_stop_4_names_the_models_activation_and_draws_its_negatives(
    imported, monkeypatch, lang, named, question, told
):
    root, _ = imported
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    at = open_page("pages/tour.py", model=NAME, tour_sentence=SENTENCE, stop="4", ex="relu_zeros:40", lang=lang)
    figure = chart(at, "tour_figure_ffn_embeddings")
    title = figure["layout"]["title"]["text"]
    assert named in title and "max(0" not in title, title
    heatmap = figure["data"][0]
    assert plotly_array(heatmap["z"]).min() < 0, "swish's negative values are drawn"
    assert heatmap.get("zmin") != 0 and heatmap.get("zmid") == 0, "a scale centred on zero, not cut off at zero"
    text = " ".join(m.value for m in at.markdown)
    assert question in text and told in text and "exactly zero?" not in text
    assert "ReLU가 정확히 0으로" not in text
    assert any("swish" in c.value for c in at.caption)
