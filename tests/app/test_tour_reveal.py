"""No exercise of the tour shows its answer before the guess is checked: what in the stop's figure, table or
caption would give it away is hidden until the guess is committed, and shown after (the guess committed with
the Check button, or arriving in a lecturer's link as ?ex=key:guess)."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import chart, open_page, plotly_array

PAGE = "pages/tour.py"
SENTENCE = "a small child sees the red dog ."


def open_tour(stop: int, **params: str):
    at = open_page(PAGE, model="words-fixture", tour_sentence=SENTENCE, stop=str(stop), lang="en", **params)
    assert not at.exception, [e.message for e in at.exception]
    return at


def answer_of(at, key: str) -> str:
    """The answer the page reveals for exercise `key` ('... the model says 42.')."""
    exercises = at.session_state["tour_guesses"]
    assert key in exercises
    [message] = [m.value for m in at.success] + [m.value for m in at.warning]
    return message.rsplit("the model says ", 1)[1].rstrip(".")


def test_relu_share_is_in_the_figure_title_only_after_the_guess(checkpoint_root):
    at = open_tour(4)
    title = chart(at, "tour_figure_ffn_embeddings")["layout"]["title"]["text"]
    assert "%" not in title and "zeros" not in title, title
    at.slider(key="guess_relu_zeros").set_value(40.0).run()
    at.button(key="check_relu_zeros").click().run()
    answer = answer_of(at, "relu_zeros")
    title = chart(at, "tour_figure_ffn_embeddings")["layout"]["title"]["text"]
    assert f"{answer}% zeros" in title, (title, answer)


def test_crossover_is_marked_only_after_the_guess(checkpoint_root):
    def marked(at) -> bool:
        figure = chart(at, "tour_figure_why_self_attention")
        return any("n = d" in a.get("text", "") for a in figure["layout"].get("annotations", []))

    def crossing_drawn(at) -> bool:
        figure = chart(at, "tour_figure_why_self_attention")
        d = 32  # the words fixture's d_model
        return plotly_array(figure["data"][0]["x"]).max() >= d

    at = open_tour(6)
    assert not marked(at) and not crossing_drawn(at)
    at = open_tour(6, ex="crossover:100")
    assert marked(at) and crossing_drawn(at)


def test_the_models_probability_is_drawn_only_after_the_guess(checkpoint_root):
    at = open_tour(7)
    names = [trace["name"] for trace in chart(at, "tour_smoothing")["data"]]
    assert "this model" not in names and len(names) == 2
    at = open_tour(7, ex="confidence:0.5")
    names = [trace["name"] for trace in chart(at, "tour_smoothing")["data"]]
    assert "this model" in names


def test_table3_scores_are_shown_only_after_the_guess(checkpoint_root):
    def bleu_column(at) -> list[str]:
        # Table 3 itself is the stop's first table with BLEU (a live row's table follows it).
        table = next(d for d in at.dataframe if "BLEU" in d.value.columns)
        return list(table.value["BLEU"])

    at = open_tour(9)
    shown = bleu_column(at)
    assert shown.count("?") == len(shown) - 1 and "25.8" in shown, shown  # the base row's is in the question
    assert "23.7" not in shown
    at = open_tour(9, ex="table3_worst:(C) N=2")
    shown = bleu_column(at)
    assert "?" not in shown and "23.7" in shown
    assert "None" not in str(at.dataframe[0].value.to_dict()), "empty cells show a dash"


@pytest.mark.parametrize(("stop", "key", "guess"), [(8, "beam_changes", "no")])
def test_beam_translations_are_listed_only_after_the_guess(checkpoint_root, stop, key, guess):
    def beams_drawn(at) -> set[int]:
        return {x for trace in chart(at, "tour_figure_beam_search")["data"] for x in trace["x"]}

    at = open_tour(stop)
    assert not [d for d in at.dataframe if "translation" in d.value.columns]
    # A wider beam's score differs from greedy's exactly when its translation does: greedy's points alone.
    assert beams_drawn(at) == {1}
    at = open_tour(stop, ex=f"{key}:{guess}")
    assert [d for d in at.dataframe if "translation" in d.value.columns]
    assert {1, 4} <= beams_drawn(at)


def test_the_unscaled_softmax_waits_for_the_guess(checkpoint_root):
    at = open_tour(2)
    assert at.toggle(key="tour_sdp_scaled").disabled and at.toggle(key="tour_sdp_scaled").value
    at = open_tour(2, ex="sqrt_dk:0.9")
    assert not at.toggle(key="tour_sdp_scaled").disabled
