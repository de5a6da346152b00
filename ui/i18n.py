"""The session's language for the app: `?lang=ko|en`, else the browser's preferred language, else English.

`t("English text", **fields)` is what pages call for every visible string; the catalogue is explorer/i18n.py.
"""

from __future__ import annotations

import streamlit as st

from explorer.i18n import LANGUAGES, normalize_language, translate

_KEY = "lang"


def current_language() -> str:
    if _KEY not in st.session_state:
        raw = st.query_params.get(_KEY)
        if raw is None:
            raw = getattr(st.context, "locale", None)
        st.session_state[_KEY] = normalize_language(raw)
    return str(st.session_state[_KEY])


def t(message: str, **fields: object) -> str:
    return translate(message, current_language(), **fields)


__all__ = ["LANGUAGES", "current_language", "t"]
