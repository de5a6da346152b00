"""Checkpoints uploaded in the sidebar: each browser session gets its own private folder.

The folder is made by `tempfile.mkdtemp` (mode 0700, an unpredictable name) the first time a session uploads,
listed for that session only, and removed when the session no longer needs it: the `SessionUploads` object
lives in the session's `st.session_state`, and a `weakref.finalize` deletes the folder when Streamlit drops
the session (tab closed, session expired) or the process exits. Folders left behind by a server that was
killed are removed when the next server starts (`remove_stale_folders`), recognised by the process id in
their name.

No streamlit in this module: the sidebar (ui/model_picker.py) holds one `SessionUploads` per session.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

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
        return self._folder

    def checkpoints(self) -> list[Path]:
        return list_checkpoints(self._folder) if self._folder is not None else []

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
        for name in NEEDED:
            (staging / name).write_bytes(files[name])
        try:
            load_checkpoint(staging)
        except CheckpointError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        staging.rename(target)
        return target

    def close(self) -> None:
        """Remove the folder now (also done automatically when this object is garbage collected)."""
        if self._finalizer is not None:
            self._finalizer()
        self._folder = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale_folders(parent: str | Path | None = None) -> list[Path]:
    """Delete upload folders whose server process is gone (killed before its finalizers ran). Returns them."""
    parent = Path(parent or tempfile.gettempdir())
    removed = []
    for folder in parent.glob(f"{PREFIX}*"):
        match = _OWNER.match(folder.name)
        if match and folder.is_dir() and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
