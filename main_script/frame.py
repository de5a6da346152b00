"""Attention Explorer: the frame. Page list (the top bar), sidebar (language, checkpoint, device), shared model loading.

Streamlit's main script. Users start it with `python app.py`, which runs `streamlit run main_script/server.py`
(this script served with page addresses that tell the browser where the server is);
pages live in pages/ as short chains of sections in ui/; the engine is explorer/.

Why the main script is in a folder of its own: Streamlit treats a folder named `pages/` beside the main script
as its old multipage layout, in which the first request to a fresh server for /beam runs pages/beam.py on
its own, without this frame. Here the main script's folder has no `pages/`, so `st.navigation` decides
every page from the first request on, and every page's URL (/translate?sentence=…) opens that page. Its
.streamlit/config.toml sits beside it, where Streamlit looks for the main script's settings.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # ui/ and pages/ sit in the repository root, one folder up
    sys.path.insert(0, str(ROOT))

from ui.startup import start_up  # noqa: E402

# Once per process, before any page imports them: the OpenMP settings, then the heavy libraries (ui/startup.py).
# The server began this when it started (main_script/server.py); the first run waits for it to finish.
start_up()

import streamlit as st  # noqa: E402

from ui.i18n import language_switch, t  # noqa: E402
from ui.layout import compact_style, fit_sidebar_to_window, make_controls_slot  # noqa: E402
from ui.model_picker import sidebar  # noqa: E402
from ui.pages import page_menu  # noqa: E402
from ui.presenter import presenter_toggle  # noqa: E402

st.set_page_config(page_title="Attention Explorer", page_icon="👁️", layout="wide")

language_switch()
with st.sidebar:
    compact_style()  # a style element: it applies to the whole page, and takes no place in the main area
    fit_sidebar_to_window()
make_controls_slot()  # the page's own controls: first in the sidebar, in presenter mode a popover (ui/layout.py)
navigation = st.navigation(page_menu(), position="top")
st.session_state["selection"] = sidebar()
presenter_toggle()
with st.sidebar:
    st.caption(
        t(
            "Vaswani et al., *Attention Is All You Need* (2017) — every figure here is computed from the "
            "loaded model or measured on this machine."
        )
    )
navigation.run()
