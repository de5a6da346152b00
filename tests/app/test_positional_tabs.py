"""The Positional encoding page's four parts are tabs, and only the open one is drawn: the sinusoids by default,
the similarity and shift, the model's input and word order from a link (?pe_part=), the same link in both
languages; an unknown part opens the first. The tour's stop on embeddings links to the model's-input tab."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.apptest_helpers import chart_keys, open_page
from ui.tour.links import STOP_PAGES, STOP_TABS, full_page_link

SENTENCE = "a small child sees the red dog ."
# tab -> a chart it draws; every other tab's charts must be absent
DRAWN = {
    "encoding": ("pe_heatmap", "pe_curves"),
    "similarity": ("pe_similarity", "pe_similarity_offset", "pe_shift_matrix"),
    "input": ("pe_norms",),
    "word_order": ("pe_wo",),
}


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("part", [None, "similarity", "input", "word_order", "no-such-part"])
def test_only_the_open_part_is_drawn(checkpoint_root, lang, part):
    params = {"pe_sentence": SENTENCE, "lang": lang}
    if part is not None:
        params["pe_part"] = part
    at = open_page("pages/positional.py", model="words-fixture", **params)
    keys = chart_keys(at)
    opened = part if part in DRAWN else "encoding"
    for tab, charts in DRAWN.items():
        drawn = [key for key in keys if key.startswith(charts)]
        if tab == opened:
            assert drawn, (tab, keys)
        else:
            assert not drawn, (opened, tab, keys)
    # The URL keeps the part by its name, not the tab's translated label; the first tab needs no parameter.
    assert at.query_params.get("pe_part") == (None if opened == "encoding" else part)


def test_the_embeddings_stop_opens_the_model_input_tab():
    assert STOP_PAGES["ffn_embeddings"] == "positional"
    query = parse_qs(urlparse(full_page_link("positional", SENTENCE, tab=STOP_TABS["ffn_embeddings"])).query)
    assert query["pe_part"] == ["input"] and query["pe_sentence"] == [SENTENCE]
    assert "pe_part" not in full_page_link("positional", SENTENCE), "the positional stop opens the first tab"
