"""Step by step's three parts are tabs, and only the open one is drawn: the stages by default, the √d_k and
additive parts from a link (?sbs_part=), the same link in both languages; an unknown part opens the stages."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import chart_keys, open_page

SENTENCE = "a small child sees the red dog ."


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize(
    "part, expected, absent",
    [
        (None, "sbs_q", ("sbs_demo", "sbs_additive")),
        ("scaling", "sbs_demo_curves", ("sbs_q", "sbs_additive")),
        ("additive", "sbs_additive_query", ("sbs_q", "sbs_demo")),
        ("no-such-part", "sbs_q", ("sbs_demo", "sbs_additive")),
    ],
)
def test_only_the_open_part_is_drawn(checkpoint_root, lang, part, expected, absent):
    params = {"sbs_sentence": SENTENCE, "lang": lang}
    if part is not None:
        params["sbs_part"] = part
    at = open_page("pages/step_by_step.py", model="words-fixture", **params)
    keys = chart_keys(at)
    assert any(key.startswith(expected) for key in keys), keys
    assert not [key for key in keys if key.startswith(absent)], keys
    # The URL keeps the part by its name, not the tab's translated label; the first tab needs no parameter.
    kept = at.query_params.get("sbs_part")
    assert kept == (part if part in ("scaling", "additive") else None)
