"""Checkpoint uploads: messages name the files the user uploaded, never the server's folders; upload folders go
with their session, and stale ones at start-up."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.checkpoint import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE, CheckpointError
from ui.uploads import PREFIX, STALE_AFTER_S, SessionUploads, remove_stale_folders, without_paths


def _files(checkpoint: Path) -> dict[str, bytes]:
    return {name: (checkpoint / name).read_bytes() for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE)}


@pytest.mark.parametrize(
    "broken",
    [
        {CONFIG_FILE: b"{"},
        {CONFIG_FILE: b"{}"},
        {WEIGHTS_FILE: b"\x00" * 64},
        {TOKENIZER_FILE: b"not a sentencepiece model"},
    ],
    ids=["config-not-json", "config-no-tag", "weights-garbage", "tokenizer-garbage"],
)
def test_broken_upload_message_names_the_file_not_the_server_path(tmp_path, words_checkpoint, broken):
    uploads = SessionUploads(parent=tmp_path)
    with pytest.raises(CheckpointError) as caught:
        uploads.save({**_files(words_checkpoint), **broken})
    message = str(caught.value)
    for leak in (str(tmp_path), tempfile.gettempdir() + os.sep, PREFIX, ".staging-"):
        assert leak not in message, f"{leak!r} in {message!r}"
    assert list(broken)[0] in message, f"the message names the uploaded file: {message!r}"
    assert not list(uploads.folder.iterdir()), "nothing of a refused upload is kept"


def test_without_paths_keeps_names():
    folder = Path("/tmp/attention-explorer-upload-1-x/.staging-y")
    assert without_paths(f"{folder}/config.json is broken", folder) == "config.json is broken"
    assert without_paths(f"cannot read {folder}", folder) == "cannot read the upload"


def test_stale_folder_older_than_the_threshold_goes_at_start_up(tmp_path):
    old = tmp_path / f"{PREFIX}{os.getpid()}-old"  # this process's id: a restarted server that got the same pid
    fresh = tmp_path / f"{PREFIX}{os.getpid()}-fresh"
    for folder in (old, fresh):
        folder.mkdir()
    long_ago = time.time() - STALE_AFTER_S - 60
    os.utime(old, (long_ago, long_ago))
    assert remove_stale_folders(tmp_path) == [old]
    assert not old.exists() and fresh.exists()


def _session_with_upload(parent: str, checkpoint: str) -> None:
    """A page whose session uploads a checkpoint (as the sidebar does) and shows where it went."""
    from pathlib import Path

    import streamlit as st

    from ui.uploads import SessionUploads

    if "uploads" not in st.session_state:
        st.session_state["uploads"] = SessionUploads(parent=parent)
        files = {p.name: p.read_bytes() for p in Path(checkpoint).iterdir() if p.is_file()}
        st.session_state["uploads"].save(files)
    st.write(str(st.session_state["uploads"].folder))


def test_session_folder_is_released_with_the_session(tmp_path, words_checkpoint):
    """Streamlit releases session-scoped resources when the session disconnects; the folder goes with them,
    while the session's state (kept for a reconnect) still holds the uploads object."""
    import streamlit as st

    at = AppTest.from_function(_session_with_upload, args=(str(tmp_path), str(words_checkpoint)), default_timeout=30)
    at.run()
    assert not at.exception
    folder = Path(at.markdown[0].value)
    assert folder.is_dir() and folder.parent == tmp_path
    st.cache_resource.clear()  # what a disconnect does to the session's resources, through the public API
    assert not folder.exists()
    assert at.session_state["uploads"].checkpoints() == []


def test_server_start_up_removes_stale_uploads_and_prepared_jobs(tmp_path, monkeypatch):
    import ui.startup
    from explorer.data import prepare

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv(prepare.ROOT_ENV, str(tmp_path / "prepare"))
    monkeypatch.setattr(ui.startup, "_done", set())  # a fresh server process
    long_ago = time.time() - STALE_AFTER_S - 60
    stale_upload, stale_job = tmp_path / f"{PREFIX}{os.getpid()}-old", tmp_path / "prepare" / "0123abcd"
    fresh_job = tmp_path / "prepare" / "4567ef01"
    for folder in (stale_upload, stale_job, fresh_job):
        folder.mkdir(parents=True)
    for folder in (stale_upload, stale_job):
        os.utime(folder, (long_ago, long_ago))
    ui.startup.remove_leftovers()
    assert not stale_upload.exists() and not stale_job.exists() and fresh_job.exists()
