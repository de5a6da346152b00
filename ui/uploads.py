"""Checkpoints uploaded in the sidebar: each browser session gets its own private folder.

The folder is made by `tempfile.mkdtemp` (mode 0700, an unpredictable name) the first time a session uploads,
listed for that session only, and removed when the session ends, however it ends:

- when its browser disconnects (tab closed, reloaded, crashed, network gone): the folder is registered in a
  session-scoped resource (`st.cache_resource(scope="session", on_release=...)`, Streamlit's public way to
  release what a session holds), which Streamlit releases at once when the session's connection ends. The
  session's state itself is kept for a reconnect and dropped only later, so waiting for it is not enough;
- when the `SessionUploads` object is dropped or the process exits (`weakref.finalize`), which also covers
  uses outside a Streamlit session (tests, scripts);
- when the server was killed before either could run: the next server removes folders whose process is
  gone, and folders nobody has used for `STALE_AFTER_S` (a restarted server in a container often gets its
  predecessor's process id), at start-up (`remove_stale_folders`, called from ui/startup.py).

A reconnect after a network blip therefore finds its uploads gone; the model picker says so and the files can
be uploaded again. Error messages name the uploaded files, never the server's folders (`without_paths`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException

from explorer.checkpoint import (
    CONFIG_FILE,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
    CheckpointError,
    list_checkpoints,
    load_checkpoint,
)

PREFIX = "attention-explorer-upload-"
NEEDED = (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE)
_OWNER = re.compile(re.escape(PREFIX) + r"(\d+)-")
STALE_AFTER_S = 24 * 3600  # a folder nobody listed or wrote for this long belongs to no live session


def _remove_folders(folders: list[Path]) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


@st.cache_resource(scope="session", on_release=_remove_folders, show_spinner=False)
def _session_folders() -> list[Path]:
    """The upload folders of the running browser session; Streamlit removes them when the session disconnects."""
    return []


def release_with_session(folder: Path) -> bool:
    """Remove `folder` when the running Streamlit session ends; False outside a session (nothing registered)."""
    try:
        _session_folders().append(folder)
    except StreamlitAPIException:  # no session on this thread: a test or a script, the finalizer alone applies
        return False
    return True


class SessionUploads:
    """The uploaded checkpoints of one browser session, in a private folder removed with this object."""

    def __init__(self, parent: str | Path | None = None) -> None:
        self._parent = parent
        self._folder: Path | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def folder(self) -> Path | None:
        """The private folder, or None before the first upload."""
        return self._folder

    def _ensure_folder(self) -> Path:
        if self._folder is None or not self._folder.is_dir():
            self._folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=self._parent))
            self._finalizer = weakref.finalize(self, shutil.rmtree, str(self._folder), True)
            release_with_session(self._folder)
        return self._folder

    def checkpoints(self) -> list[Path]:
        """The checkpoints uploaded so far; listing marks the folder as in use (see `remove_stale_folders`)."""
        if self._folder is None:
            return []
        try:
            os.utime(self._folder)
        except OSError:  # released with a dropped connection: nothing to list
            return []
        return list_checkpoints(self._folder)

    def save(self, files: dict[str, bytes]) -> Path:
        """Store the three files of a checkpoint (name -> bytes) and validate them by loading.

        Raises CheckpointError with a clear message; nothing is kept when validation fails. The same files
        uploaded twice land in the same folder (named by their digest).
        """
        missing = [name for name in NEEDED if name not in files]
        if missing:
            raise CheckpointError(f"upload the three files of a checkpoint folder; missing: {', '.join(missing)}")
        digest = hashlib.sha256(b"".join(files[name] for name in NEEDED)).hexdigest()[:12]
        folder = self._ensure_folder()
        target = folder / f"checkpoint-{digest}"
        if target.is_dir():
            return target
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
        try:
            for name in NEEDED:
                (staging / name).write_bytes(files[name])
            load_checkpoint(staging)
        except CheckpointError as error:
            shutil.rmtree(staging, ignore_errors=True)
            raise CheckpointError(without_paths(str(error), staging)) from None
        except BaseException:  # an unexpected failure (or the session stopping) leaves no half-checked folder
            shutil.rmtree(staging, ignore_errors=True)
            raise
        staging.rename(target)
        return target

    def close(self) -> None:
        """Remove the folder now (also done automatically when this object is garbage collected)."""
        if self._finalizer is not None:
            self._finalizer()
        self._folder = None


def without_paths(message: str, folder: Path) -> str:
    """`message` with the server's paths under `folder` replaced by what the user knows: a file by the name it
    was uploaded under ("…/.staging-x/config.json" -> "config.json"), the folder by "the upload"."""
    for root in dict.fromkeys((str(folder), os.path.realpath(folder))):
        message = re.sub(re.escape(root) + r"[/\\]([^\s/\\:,;'\")]+)", r"\1", message)
        message = message.replace(root, "the upload")
    return message


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale_folders(parent: str | Path | None = None, stale_after_s: float = STALE_AFTER_S) -> list[Path]:
    """Delete upload folders no live session can own: their server process is gone (killed before its clean-up
    ran), or nobody has used them for `stale_after_s` seconds. Returns them."""
    parent = Path(parent or tempfile.gettempdir())
    now = time.time()
    removed = []
    for folder in parent.glob(f"{PREFIX}*"):
        match = _OWNER.match(folder.name)
        if not match or not folder.is_dir():
            continue
        owner = int(match.group(1))
        try:
            idle = now - folder.stat().st_mtime
        except OSError:  # removed meanwhile
            continue
        if (owner != os.getpid() and not _alive(owner)) or idle > stale_after_s:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
