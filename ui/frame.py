"""Make every page run inside app.py's frame, even on a deep link to a fresh server.

Streamlit treats a `pages/` folder beside the main script as the old (v1) multipage layout until the first
`st.navigation` call clears that flag for the whole process. So the very first request after the server
starts, if it is a deep link such as /beam, would run pages/beam.py without app.py: no navigation, no
checkpoint picker. Clearing the flag and rerunning sends that request through app.py like every other.

At most once per session: Streamlit's AppTest resets the flag before every run, and a rerun on every run
would swallow the button clicks a test makes.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

_CHECKED = "_frame_checked"


def ensure_frame() -> None:
    if PagesManager.uses_pages_directory and not st.session_state.get(_CHECKED):
        st.session_state[_CHECKED] = True
        PagesManager.uses_pages_directory = False
        st.rerun()
