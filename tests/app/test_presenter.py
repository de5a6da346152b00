"""Presenter mode hides the sidebar: the page's controls move onto the page (the presenter bar's "Controls"
popover), where they still change the page, and the bar leaves presenter mode with the controls kept."""

from __future__ import annotations

from tests.apptest_helpers import open_page, query_value

SENTENCE = "a small child sees the red dog ."
OTHER = "the dog walks in the park ."


def keys(elements) -> list[str | None]:
    return [element.key for element in elements]


def test_presenter_mode_keeps_the_page_controls_on_the_page_and_leaves(checkpoint_root):
    at = open_page("pages/translate.py", model="words-fixture", sentence=SENTENCE, presenter="1")
    assert "sentence" not in keys(at.sidebar.text_input), "the sidebar is hidden in presenter mode"
    assert "sentence" in keys(at.main.text_input), "the sentence box is on the page"
    assert "mode" in keys(at.main.radio), "so is the view"
    at.main.text_input(key="sentence").set_value(OTHER).run()
    at.main.radio(key="mode").set_value("mean").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.main.text_input(key="sentence").value == OTHER and at.main.radio(key="mode").value == "mean"
    at.button(key="present_exit").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert query_value(at, "presenter") is None
    assert at.sidebar.text_input(key="sentence").value == OTHER, "back in the sidebar, as chosen"
    assert at.sidebar.radio(key="mode").value == "mean"
