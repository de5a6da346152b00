"""A Streamlit script for tests/browser/test_upload_cleanup.py: the session uploads a checkpoint as the sidebar
does (ui/uploads.py, into $UPLOAD_TEST_PARENT, from $UPLOAD_TEST_CHECKPOINT) and shows the folder it went to."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `streamlit run tests/...` puts tests/ first

from ui.uploads import SessionUploads  # noqa: E402

if "uploads" not in st.session_state:
    uploads = SessionUploads(parent=os.environ["UPLOAD_TEST_PARENT"])
    checkpoint = Path(os.environ["UPLOAD_TEST_CHECKPOINT"])
    uploads.save({p.name: p.read_bytes() for p in checkpoint.iterdir() if p.is_file()})
    st.session_state["uploads"] = uploads
st.code(str(st.session_state["uploads"].folder), language=None)
