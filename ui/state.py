"""Shared app state: which checkpoint and device, the cached model, cached translations.

The model is loaded once per (checkpoint, device, version) per process with `st.cache_resource` and shared
read-only by every browser session: nothing a session does mutates it (attention comes back as values).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from explorer.checkpoint import (CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE, Checkpoint, CheckpointError,
                                 is_checkpoint, list_checkpoints, load_checkpoint)
from explorer.devices import available_devices, resolve_device
from explorer.inference import EXTRA_OUTPUT_TOKENS, Translation, translate

REPO_ROOT = Path(__file__).resolve().parents[1]
# Tests point the app at a folder of fixture checkpoints; users get the shipped ones.
CHECKPOINT_ROOT = Path(os.environ.get("EXPLORER_CHECKPOINTS", REPO_ROOT / "checkpoints"))
UPLOAD_ROOT = Path(tempfile.gettempdir()) / "attention-explorer-uploads"
DEFAULT_CHECKPOINT = "multi30k-en-de"


@dataclass(frozen=True)
class Selection:
    path: str
    device: str
    version: float  # mtime of the weights: a checkpoint re-saved under the same name invalidates caches

    @property
    def name(self) -> str:
        return Path(self.path).name


def checkpoint_root() -> Path:
    """$EXPLORER_CHECKPOINTS read at call time (tests set it after this module may have been imported),
    else CHECKPOINT_ROOT."""
    env = os.environ.get("EXPLORER_CHECKPOINTS")
    return Path(env) if env else CHECKPOINT_ROOT


def checkpoint_choices() -> dict[str, str]:
    """label -> path for every checkpoint under checkpoints/ plus those uploaded in this process."""
    choices = {p.name: str(p) for p in list_checkpoints(checkpoint_root())}
    for p in list_checkpoints(UPLOAD_ROOT):
        choices[f"uploaded: {p.name}"] = str(p)
    return choices


def weights_version(path: str) -> float:
    weights = Path(path) / WEIGHTS_FILE
    return weights.stat().st_mtime if weights.exists() else 0.0


@st.cache_resource(show_spinner="Loading model…", max_entries=6)
def load_model(path: str, device: str, version: float) -> Checkpoint:
    """One shared, eval-mode model per checkpoint/device/version. `version` is only part of the cache key."""
    return load_checkpoint(path, resolve_device(device))


def save_uploaded_checkpoint(files: list) -> Path:
    """Store uploaded checkpoint files (config.json, model.safetensors, tokenizer.model) and validate them.

    Raises CheckpointError with a clear message; nothing is kept when validation fails.
    """
    by_name = {f.name: f.getvalue() for f in files}
    needed = (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE)
    missing = [n for n in needed if n not in by_name]
    if missing:
        raise CheckpointError(f"upload the three files of a checkpoint folder; missing: {', '.join(missing)}")
    digest = hashlib.sha256(b"".join(by_name[n] for n in needed)).hexdigest()[:12]
    target = UPLOAD_ROOT / f"checkpoint-{digest}"
    if not is_checkpoint(target):
        staging = Path(tempfile.mkdtemp(prefix=".upload-", dir=_upload_root()))
        for name in needed:
            (staging / name).write_bytes(by_name[name])
        try:
            load_checkpoint(staging)
        except CheckpointError:
            import shutil
            shutil.rmtree(staging, ignore_errors=True)
            raise
        staging.rename(target)
    return target


def _upload_root() -> Path:
    UPLOAD_ROOT.mkdir(parents=True, exist_ok=True)
    return UPLOAD_ROOT


def sidebar() -> Selection | None:
    """Checkpoint and device pickers; returns the current selection (None when no checkpoint exists)."""
    choices = checkpoint_choices()
    with st.sidebar:
        st.markdown("### Model")
        if not choices:
            st.warning("No checkpoint found in `checkpoints/`. Train one on the **Train** page or upload one.")
        else:
            labels = list(choices)
            wanted = st.query_params.get("model")
            default = wanted if wanted in choices else (DEFAULT_CHECKPOINT if DEFAULT_CHECKPOINT in choices else labels[0])
            if st.session_state.get("checkpoint_label") not in choices:
                st.session_state["checkpoint_label"] = default
            label = st.selectbox("Checkpoint", labels, key="checkpoint_label",
                                 help="Every folder in checkpoints/, plus checkpoints uploaded below.")
            st.query_params["model"] = label
        devices = available_devices()
        if st.session_state.get("device") not in devices:
            st.session_state["device"] = devices[0]
        st.selectbox("Device", devices, key="device", help="CUDA is used automatically when present.")
        with st.expander("Upload a checkpoint"):
            files = st.file_uploader("config.json, model.safetensors and tokenizer.model", accept_multiple_files=True,
                                     key="checkpoint_upload")
            if files and st.button("Load uploaded checkpoint"):
                try:
                    saved = save_uploaded_checkpoint(files)
                except CheckpointError as error:
                    st.error(f"Not loaded: {error}")
                else:
                    st.session_state["checkpoint_label"] = f"uploaded: {saved.name}"
                    st.rerun()
    if not choices:
        return None
    path = choices[st.session_state["checkpoint_label"]]
    return Selection(path, st.session_state["device"], weights_version(path))


def current_model(selection: Selection) -> Checkpoint | None:
    """The shared model for `selection`, or None after showing why it could not be loaded."""
    try:
        return load_model(selection.path, selection.device, selection.version)
    except CheckpointError as error:
        st.error(f"Cannot load checkpoint {selection.name}: {error}")
        return None


@st.cache_data(max_entries=512, show_spinner=False)
def cached_translate(path: str, device: str, version: float, sentences: tuple[str, ...], beam_size: int = 1,
                     alpha: float = 0.6, with_attention: bool = True, with_trace: bool = False,
                     n_best: int = 1, max_extra_tokens: int = EXTRA_OUTPUT_TOKENS) -> list[Translation]:
    """Translations (with attention and optional beam trace) keyed by everything they depend on."""
    checkpoint = load_model(path, device, version)
    return translate(checkpoint.model, checkpoint.tokenizer, list(sentences), beam_size=beam_size, alpha=alpha,
                     with_attention=with_attention, with_trace=with_trace, n_best=n_best,
                     max_extra_tokens=max_extra_tokens)


def translate_for(selection: Selection, sentences: list[str], **options) -> list[Translation]:
    return cached_translate(selection.path, selection.device, selection.version, tuple(sentences), **options)


def require_model() -> tuple[Selection, Checkpoint]:
    """The page's selection and shared model; stops the page with a message when there is none.

    app.py draws the sidebar before running a page; a page run on its own (in a test) draws it itself.
    """
    if "selection" in st.session_state:  # app.py drew the sidebar (None: no checkpoint exists)
        selection = st.session_state["selection"]
    else:
        selection = sidebar()
    if selection is None:
        st.info("Load or train a checkpoint to use this page.")
        st.stop()
    checkpoint = current_model(selection)
    if checkpoint is None:
        st.stop()
    return selection, checkpoint
