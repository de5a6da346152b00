"""The Positional page words its sentence on the token and position terms from the mean cosine it shows: the
angle is given, and "nearly orthogonal" only where the cosine is near 0 (explorer/claims.py's thresholds)."""

from __future__ import annotations

import pytest

from explorer import claims
from tests.apptest_helpers import open_page

SENTENCE = "a small child sees the red dog ."


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_cosine_sentence_is_worded_from_the_cosine_shown(checkpoint_root, lang):
    at = open_page(
        "pages/positional.py", model="words-fixture", lang=lang, state=dict(pe_sentence=SENTENCE), pe_part="input"
    )
    assert not at.exception, [e.message for e in at.exception]
    [table] = [d.value for d in at.dataframe if "cos(E, PE)" in d.value.columns]
    cosine = float(table["cos(E, PE)"].mean())
    expected = claims.token_and_position_cosine(cosine, lang)
    assert any(expected in m.value for m in at.markdown), (expected, [m.value for m in at.markdown])
    assert f"{claims.angle_degrees(cosine):.0f}°" in expected
