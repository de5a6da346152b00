"""Clicks that rerun a fragment, not the page: the Heads page's head switches (with the translations and the
remaining heads' figure) and the Beam page's step slider (with the tree and the step's table). Each click still
changes its figure, the URL keeps the state, and a fresh visit with that URL draws the same figure.

AppTest reruns the whole script on every click; which fragment a widget belongs to is what the browser sends
back with a click, so that is what is checked here."""

from __future__ import annotations

from tests.apptest_helpers import chart, open_page, query_value

HEADS = "pages/heads.py"
BEAM = "pages/beam.py"
HEADS_SENTENCE = "a b c d e f g"
BEAM_SENTENCE = "a small child sees the red dog ."


def fragment_of(at, key: str) -> str | None:
    """The id of the fragment the widget keyed `key` was drawn in; None when drawn by the page itself."""
    metadata = at.session_state._state._state._new_widget_state.widget_metadata
    (found,) = [m for widget_id, m in metadata.items() if widget_id.endswith(f"-{key}")]
    return found.fragment_id


def data(figure: dict) -> list:
    return figure["data"]


def test_a_head_switch_reruns_the_ablation_fragment_and_the_link_restores_it(checkpoint_root, one_torch_thread):
    at = open_page(HEADS, model="reverse-fixture", h_sentence=HEADS_SENTENCE)
    inside = fragment_of(at, "hm_cross_1_0")
    assert inside is not None
    assert {fragment_of(at, k) for k in ("hm_cross_0_0", "hm_enc_1_1", "hm_all_on", "weighting")} == {inside}
    assert fragment_of(at, "h_family") is None and fragment_of(at, "h_view") is None, "the page's own controls"
    before = chart(at, "heads_remaining")

    at.checkbox(key="hm_cross_1_0").uncheck().run()
    assert not at.exception, [e.message for e in at.exception]
    assert query_value(at, "heads") == "cross.1.0"
    after = chart(at, "heads_remaining")
    assert data(after) != data(before), "the switched-off head is blanked"

    again = open_page(HEADS, model="reverse-fixture", h_sentence=HEADS_SENTENCE, heads="cross.1.0")
    assert again.checkbox(key="hm_cross_1_0").value is False
    assert chart(again, "heads_remaining") == after


def test_a_beam_step_reruns_the_tree_fragment_and_the_link_restores_it(checkpoint_root, one_torch_thread):
    at = open_page(BEAM, model="words-fixture", beam_sentence=BEAM_SENTENCE, beam_k=3)
    inside = fragment_of(at, "beam_step")
    assert inside is not None and fragment_of(at, "beam_tree") == inside, "the slider and the tree move together"
    assert fragment_of(at, "beam_hyp") is None, "the hypothesis picker and the attention below are the page's"
    steps = at.slider(key="beam_step")
    n_steps = int(steps.max)
    assert steps.value == n_steps >= 2
    last = chart(at, "beam_tree")

    steps.set_value(1).run()
    assert not at.exception, [e.message for e in at.exception]
    first = chart(at, "beam_tree")
    assert f"step 1 of {n_steps}" in first["layout"]["title"]["text"] and data(first) != data(last)
    # Bound to ?beam_step= (the browser writes the URL, wherever the slider is drawn).
    assert at.slider(key="beam_step").proto.query_param_key == "beam_step"
    assert any(s.value.startswith("Step 1:") for s in at.subheader), "the step's table follows the slider"

    again = open_page(BEAM, model="words-fixture", beam_sentence=BEAM_SENTENCE, beam_k=3, beam_step=1)
    assert again.slider(key="beam_step").value == 1
    assert chart(again, "beam_tree") == first
