"""Step by step's four parts are tabs, and only the open one is drawn: Eq. 1's scores to weights by default, its
weights to output, the √d_k and additive parts from a link (?sbs_part=), the same link in both languages; an
unknown part opens the first."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import chart_keys, matrix_tables, open_page

SENTENCE = "a small child sees the red dog ."


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize(
    "part, expected, absent",
    [
        (None, "sbs_row", ("sbs_demo", "sbs_additive", "sbs_weighted")),
        ("output", "sbs_weighted", ("sbs_row", "sbs_demo", "sbs_additive")),
        ("scaling", "sbs_demo_curves", ("sbs_row", "sbs_additive", "sbs_weighted")),
        ("additive", "sbs_additive_query", ("sbs_row", "sbs_demo", "sbs_weighted")),
        ("no-such-part", "sbs_row", ("sbs_demo", "sbs_additive", "sbs_weighted")),
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
    # q, K and V (tables, not charts) only on Eq. 1's first tab.
    assert ("q" in matrix_tables(at)) == (expected == "sbs_row")
    # The URL keeps the part by its name, not the tab's translated label; the first tab needs no parameter.
    kept = at.query_params.get("sbs_part")
    assert kept == (part if part in ("output", "scaling", "additive") else None)


def test_the_whole_heads_matrices_are_drawn_once_their_expander_is_opened(checkpoint_root):
    """The stage matrices (every query of the head at every stage) sit in a closed expander and are not sent
    until it is opened: the browser laid them out before the figures above could show. Opened, they hold the
    head's own scores, scaled scores, masked scores and weights."""
    import json

    import numpy as np

    from tests.apptest_helpers import plotly_array

    at = open_page("pages/step_by_step.py", model="words-fixture", sbs_sentence=SENTENCE)
    assert "sbs_row" in chart_keys(at) and "sbs_stages" not in chart_keys(at)
    at.session_state["sbs_whole_head"] = True  # the expander opened: its state, as the browser sends it
    at.run()
    assert not at.exception
    [chart] = [c for c in at.get("plotly_chart") if c.key == "sbs_stages"]
    panels = [plotly_array(trace["z"]) for trace in json.loads(chart.proto.spec)["data"] if "z" in trace]
    assert len(panels) == 4
    scores, scaled, _, weights = panels
    ratio = scores[scaled != 0] / scaled[scaled != 0]
    assert np.allclose(ratio, ratio[0], rtol=1e-3) and ratio[0] > 1  # Q·Kᵀ ÷ √d_k, one √d_k for every cell
    assert np.allclose(np.nansum(weights, axis=1), 1.0, atol=1e-3)  # the softmax: each query's row sums to 1
