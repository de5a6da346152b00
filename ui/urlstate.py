"""View state in the URL query string, so a lecture slide can link straight to a sentence/layer/head.

`url_default(key, default, cast)` seeds `st.session_state[key]` from `?key=...` once per session; after
the widget ran, `sync_to_url(*keys)` writes the current values back.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st


def url_default(key: str, default: Any, cast: Callable[[str], Any] = str,
                allowed: list | tuple | range | None = None) -> Any:
    """Initialise a widget key from the URL (if valid) or `default`, only if the session has no value yet."""
    if key not in st.session_state:
        value = default
        raw = st.query_params.get(key)
        if raw is not None:
            try:
                candidate = cast(raw)
            except (TypeError, ValueError):
                candidate = default
            if allowed is None or candidate in allowed:
                value = candidate
        st.session_state[key] = value
    elif allowed is not None and st.session_state[key] not in allowed:
        st.session_state[key] = default
    return st.session_state[key]


def sync_to_url(*keys: str) -> None:
    for key in keys:
        if key in st.session_state and st.session_state[key] is not None:
            st.query_params[key] = str(st.session_state[key])
