"""Attention Explorer: the frame. Page list, sidebar (checkpoint + device), shared model loading.

Run with `streamlit run app.py`. Pages live in pages/ and stay thin; the engine is explorer/.
"""

from __future__ import annotations

import streamlit as st

from ui.pages import PAGES
from ui.state import sidebar

st.set_page_config(page_title="Attention Explorer", page_icon=":material/visibility:", layout="wide")

groups: dict[str, list] = {}
for spec in PAGES:
    groups.setdefault(spec.group, []).append(
        st.Page(str(spec.path), title=spec.title, icon=spec.icon, url_path=spec.url_path,
                default=spec is PAGES[0]))
navigation = st.navigation(groups)
st.session_state["selection"] = sidebar()
with st.sidebar:
    st.caption("Vaswani et al., *Attention Is All You Need* (2017) — every figure here is computed from the "
               "loaded model or measured on this machine.")
navigation.run()
