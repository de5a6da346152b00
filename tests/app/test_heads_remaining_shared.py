"""The Heads page's remaining-heads figure is built once and shared by the visits that draw the same: its data is
the figure's built directly from the ablated translation's attention, and a second visit builds nothing."""

from __future__ import annotations

import json

import ui.heads.ablation
from explorer.figures.heads import layer_heads
from explorer.figures.theme import for_page_theme
from tests.apptest_helpers import chart, open_page

PAGE = "pages/heads.py"
SENTENCE = "a b c d e f g"


def test_the_shared_figure_is_the_one_built_directly_and_a_second_visit_builds_none(
    checkpoint_root, one_torch_thread, monkeypatch
):
    built = []
    original = ui.heads.ablation.layer_heads

    def spy(*args, **kwargs):
        built.append((args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(ui.heads.ablation, "layer_heads", spy)
    ui.heads.ablation._remaining_figure.clear()
    first = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="cross.1.1")
    assert len(built) == 1
    shown = chart(first, "heads_remaining")

    args, kwargs = built[0]
    direct = ui.heads.ablation.fit_height(
        layer_heads.__wrapped__(*args, **kwargs), ui.heads.ablation.FIGURE_PX, width=kwargs["width"]
    )
    expected = json.loads(for_page_theme(direct, "light").to_json())  # as show_figure draws it
    assert shown["data"] == expected["data"]
    assert shown["layout"]["height"] == expected["layout"]["height"]
    assert shown["layout"]["annotations"] == expected["layout"]["annotations"], "the switched-off head titled 'off'"

    second = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="cross.1.1")
    assert len(built) == 1, "the second visit drew the shared figure"
    assert chart(second, "heads_remaining") == shown
