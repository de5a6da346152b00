"""Korean lines break between words, never inside one.

Browsers break Hangul between any two syllables by default ("이루어지|고", "레|이어"), which a Korean reader
sees as a broken word. `word-break: keep-all` breaks CJK text only where spaces are, as Latin text already
does, so the rule holds for the whole app in either language; `overflow-wrap: break-word` still breaks a word
longer than its box (a long URL, a token run) rather than let it run out of it.
"""

from __future__ import annotations

import streamlit as st

KEEP_WORDS_CSS = (
    "<style>.stApp, .stApp * { word-break: keep-all; overflow-wrap: break-word; }"
    # A data frame's cells and KaTeX's glyph boxes set their own wrapping: leave them as they are.
    " .stApp .katex, .stApp .katex * { word-break: normal; overflow-wrap: normal; }</style>"
)


def keep_words_whole() -> None:
    """Add the rule to the page (a style element that takes no room)."""
    st.html(KEEP_WORDS_CSS)
