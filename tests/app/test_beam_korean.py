"""The beam page in Korean: why the search stopped is said in Korean, in the tree's title and in the
caption under the step table, never as the engine's English constant."""

from __future__ import annotations

import re

from explorer.decoding.policy import STOP_BEAM_FULL, STOP_BOUND, STOP_MAX_LEN, STOP_NO_LIVE
from explorer.figures.beam_tree import stop_reason_text
from tests.apptest_helpers import chart, open_page

SENTENCE = "a small child sees the red dog ."
HANGUL = re.compile(r"[\uac00-\ud7a3]")
STOP_REASONS = (STOP_NO_LIVE, STOP_BEAM_FULL, STOP_BOUND, STOP_MAX_LEN)


def test_the_stop_reason_is_korean_on_the_korean_page(checkpoint_root):
    at = open_page("pages/beam.py", model="words-fixture", beam_sentence=SENTENCE, lang="ko")
    title = chart(at, "beam_tree")["layout"]["title"]["text"]
    english = next(r for r in STOP_REASONS if r in title or stop_reason_text(r, "ko") in title)
    korean = stop_reason_text(english, "ko")
    assert HANGUL.search(korean) and korean in title and english not in title, title
    captions = " ".join(c.value for c in at.caption)
    assert korean in captions and english not in captions, captions


def test_the_stop_reason_stays_english_on_the_english_page(checkpoint_root):
    at = open_page("pages/beam.py", model="words-fixture", beam_sentence=SENTENCE, lang="en")
    title = chart(at, "beam_tree")["layout"]["title"]["text"]
    assert any(r in title for r in STOP_REASONS), title
    captions = " ".join(c.value for c in at.caption)
    assert "The search stopped after step" in captions and any(r in captions for r in STOP_REASONS)
