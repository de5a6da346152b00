"""The session's language for the app: `?lang=ko|en`, else the browser's preferred language, else English.

`t("English text", **fields)` is what pages call for every visible string; the catalogue is explorer/i18n.py.
`language_switch()` draws the English / 한국어 control in the sidebar and keeps `?lang=` in the URL.
"""

from __future__ import annotations

import streamlit as st

from explorer.i18n import LANGUAGES, normalize_language, translate
from ui.line_breaks import keep_words_whole

_KEY = "lang"
NAMES = {"en": "English", "ko": "한국어"}


def current_language() -> str:
    if _KEY not in st.session_state:
        raw = st.query_params.get(_KEY)
        if raw is None:
            raw = getattr(st.context, "locale", None)
        st.session_state[_KEY] = normalize_language(raw)
    return str(st.session_state[_KEY])


def t(message: str, **fields: object) -> str:
    return translate(message, current_language(), **fields)


def language_switch() -> str:
    """English / 한국어 in the sidebar. Not bound with `bind="query-params"`: that would put the label
    ("한국어") in the URL; links say `?lang=ko`."""
    current_language()
    with st.sidebar:
        keep_words_whole()  # Hangul set on every page: its lines break between words
        lang = str(
            st.segmented_control(
                "Language",
                LANGUAGES,
                key=_KEY,
                required=True,
                format_func=NAMES.__getitem__,
                label_visibility="collapsed",
            )
        )
    st.query_params[_KEY] = lang  # kept in the URL, also after a page switch cleared it
    return lang


__all__ = ["LANGUAGES", "NAMES", "current_language", "language_switch", "t"]
