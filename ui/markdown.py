"""Text shown literally inside Streamlit's Markdown (st.markdown, st.caption, st.warning, widget labels).

`shown_value` is the one way a value the user controls reaches Markdown: a link's query parameter, an upload's
file name, a line of a corpus, a checkpoint's name or metadata. `md_escape` is its escaping step, also used for
text the app made from such values (a translation, a corpus sentence) where nothing may be cut.
"""

from __future__ import annotations

import re

# CommonMark lets every ASCII punctuation character be backslash-escaped, so escaping all of them leaves no
# emphasis, link, image, raw HTML, heading, table, maths ($) or Streamlit directive (:red[…], :material/…:).
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
# GFM also turns bare www.x.y, http(s)://… and a@b.c into links after escapes are resolved, in the text itself;
# a word joiner (U+2060, invisible) inside each trigger keeps them text.
_AUTOLINK_TRIGGER = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=//)|(?<=@)")
_WORD_JOINER = "\u2060"
# Line breaks would end a paragraph or start a block; bidirectional overrides would show the text reordered.
_UNSHOWN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
SHOWN_CHARS = 40
# An error message can quote what it refused (a file name, a checkpoint's field): shown whole up to this length.
ERROR_CHARS = 400
SENTENCE_CHARS = 200  # a sentence quoted from a corpus


def md_escape(text: str) -> str:
    """Text shown literally inside Markdown: no emphasis, links, images, HTML, maths or headings."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _AUTOLINK_TRIGGER.sub(_WORD_JOINER, text))


def shown_value(value: object, limit: int = SHOWN_CHARS) -> str:
    """A user-controlled value as Markdown that shows it as plain text on one line: control and
    direction-override characters as spaces, cut to `limit` characters with '…', every Markdown special
    escaped. Cutting first keeps a 100 KB link value from costing the browser seconds to draw."""
    text = _UNSHOWN.sub(" ", str(value))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return md_escape(text)
