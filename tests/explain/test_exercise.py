"""The predict-then-reveal exercise: the head that looks at "." (hand-made case), and the explain page's section
under AppTest in both languages: nothing revealed before a guess, then the head's value-weighted row and the word's
attribution."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.explain.exercise import dot_head
from explorer.explain.value_weighted import ValueWeighted, value_weighted, weight_by_values
from explorer.figures.explain import shares
from explorer.inference import translate
from explorer.model import SentenceAttention
from tests.apptest_helpers import chart, charts, open_page, plotly_array

SENTENCE = "a small child sees the red dog ."


def _explained(cross: np.ndarray, value_norms: np.ndarray) -> ValueWeighted:
    empty = np.zeros((1, 1, 1, 1))
    raw = SentenceAttention(encoder_self=empty, decoder_self=empty, cross=cross)
    norms = {"encoder_self": empty, "decoder_self": empty, "cross": weight_by_values(cross, value_norms)}
    return ValueWeighted(raw, norms, {"cross": value_norms})


def test_the_head_looking_at_the_full_stop_and_what_it_moves():
    source = ["▁a", "▁dog", "▁.", "</s>"]
    cross = np.full((1, 2, 3, 4), 0.25)
    cross[0, 1, 0] = [0.1, 0.1, 0.7, 0.1]  # head 2 looks at "." while producing the first word
    cross[0, 0, 2] = [0.0, 0.0, 0.9, 0.1]  # a stronger look from the last row (</s>) does not count
    # f(x) is four times longer on "dog" than on ".": 0.1·4 / (0.1·1 + 0.1·4 + 0.7·1 + 0.1·1) = 0.31 of the move.
    found = dot_head(_explained(cross, np.array([[[1.0, 4.0, 1.0, 1.0]] * 2])), source)
    assert found is not None
    assert (found.layer, found.head, found.position, found.key) == (0, 1, 0, 2)
    assert found.moved_from == 2  # 0.7 / 1.3 on "." still beats 0.4 / 1.3 on "dog"
    found = dot_head(_explained(cross, np.array([[[1.0, 8.0, 1.0, 1.0]] * 2])), source)
    assert found is not None and found.moved_from == 1  # 0.8 / 1.7 on "dog" against 0.7 / 1.7
    np.testing.assert_allclose(found.weighted, np.array([0.1, 0.8, 0.7, 0.1]) / 1.7)
    # Without punctuation the end token is the one looked at; without either there is no exercise.
    assert dot_head(_explained(cross, np.ones((1, 2, 4))), ["▁a", "▁dog", "▁x", "</s>"]).key == 3
    assert dot_head(_explained(cross[..., :3], np.ones((1, 2, 3))), ["▁a", "▁dog", "▁x"]) is None


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_guess_then_reveal(checkpoint_root, words_checkpoint, monkeypatch, lang):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoint_root))
    checkpoint = load_checkpoint(words_checkpoint)
    found_translation = translate(checkpoint.model, checkpoint.tokenizer, [SENTENCE], with_attention=True)[0]
    explained = value_weighted(checkpoint.model, found_translation.source_ids, found_translation.output_ids)
    found = dot_head(explained, found_translation.source_pieces)
    assert found is not None
    at = open_page("pages/explain.py", model="words-fixture", x_view="exercise", x_sentence=SENTENCE, lang=lang)
    assert not charts(at, "x_reveal"), "nothing is revealed before a guess"
    assert any(f"cross.{found.layer}.{found.head}" in m.value for m in at.markdown)
    at.pills(key="x_guess").set_value(found.moved_from).run()
    assert not at.exception, [e.message for e in at.exception]
    bars = chart(at, "x_reveal")["data"]
    assert len(bars) == 3
    np.testing.assert_allclose(plotly_array(bars[0]["y"]), shares(found.raw), atol=1e-6)
    np.testing.assert_allclose(plotly_array(bars[1]["y"]), shares(found.weighted), atol=1e-6)
    if lang == "en":
        assert any(m.value.startswith("Right: the head moves most from your token.") for m in at.markdown)
