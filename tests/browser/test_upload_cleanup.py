"""A session's checkpoint upload folder is removed as soon as its tab closes, on a real server: Streamlit keeps
a closed session's state for a reconnect, but releases its session-scoped resources at once (ui/uploads.py)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.browser.helpers import RENDER_TIMEOUT_MS, wait_idle


def test_upload_folder_goes_when_the_tab_closes(browser, servers, words_checkpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("UPLOAD_TEST_PARENT", str(tmp_path))
    monkeypatch.setenv("UPLOAD_TEST_CHECKPOINT", str(words_checkpoint))
    app = servers.get("upload-session", script=Path(__file__).with_name("upload_session_app.py"))
    context = browser.new_context()
    page = context.new_page()
    page.goto(app.url, timeout=RENDER_TIMEOUT_MS)
    wait_idle(page)
    folder = Path(page.locator('[data-testid="stCode"]').first.inner_text().strip())
    assert folder.parent == tmp_path and any(folder.iterdir()), "the upload is in the session's folder"
    context.close()  # the tab closes (as a crashed tab does: the connection ends)
    deadline = time.monotonic() + 30
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not folder.exists(), "the folder outlived its session"
