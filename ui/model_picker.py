"""The sidebar's model choice: which checkpoint (shipped, trained, imported with `explorer import`, or uploaded in this
browser session) on which device. An imported checkpoint is listed by its folder's name like the others, and shown
with the model it came from.

The choice is `?model=` in the URL (the selectbox is bound to it). When the chosen checkpoint's folder
disappears (deleted, renamed, a run cleaned up), the sidebar says which one is gone and what is shown instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from explorer.checkpoint import (
    WEIGHTS_FILE,
    CheckpointError,
    DecodingSettings,
    decoding_settings,
    list_checkpoints,
    read_config,
)
from explorer.devices import available_devices
from explorer.tour.recipe import averaged_from
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.uploads import SessionUploads, remove_stale_folders

REPO_ROOT = Path(__file__).resolve().parents[1]
# Tests point the app at a folder of fixture checkpoints; users get the shipped ones.
CHECKPOINT_ROOT = REPO_ROOT / "checkpoints"
DEFAULT_CHECKPOINT = "multi30k-en-de"
UPLOADED = "uploaded: "  # label prefix of the checkpoints uploaded in this browser session
MODEL_KEY, DEVICE_KEY, UPLOAD_KEY = "model", "device", "checkpoint_upload"
_UPLOADS, _UPLOAD_ERROR = "_session_uploads", "_upload_error"


@dataclass(frozen=True)
class Selection:
    path: str
    device: str
    version: float  # mtime of the weights: a checkpoint re-saved under the same name invalidates caches

    @property
    def name(self) -> str:
        return Path(self.path).name


def checkpoint_root() -> Path:
    """$EXPLORER_CHECKPOINTS read at call time (tests set it after this module was imported), else checkpoints/."""
    env = os.environ.get("EXPLORER_CHECKPOINTS")
    return Path(env) if env else CHECKPOINT_ROOT


@st.cache_resource
def _clean_up_once() -> bool:
    """At server start: remove upload folders of servers that were killed before they could."""
    remove_stale_folders()
    return True


def session_uploads() -> SessionUploads:
    """This session's uploads; the object (and with it the folder) goes when the session ends."""
    if _UPLOADS not in st.session_state:
        _clean_up_once()
        st.session_state[_UPLOADS] = SessionUploads()
    return st.session_state[_UPLOADS]


def checkpoint_choices() -> dict[str, str]:
    """label -> path: every checkpoint under checkpoints/, then those uploaded in this browser tab."""
    choices = {p.name: str(p) for p in list_checkpoints(checkpoint_root())}
    for p in session_uploads().checkpoints():
        choices[f"{UPLOADED}{p.name}"] = str(p)
    return choices


def weights_version(path: str) -> float:
    weights = Path(path) / WEIGHTS_FILE
    return weights.stat().st_mtime if weights.exists() else 0.0


def imported_from(path: str) -> str | None:
    """Where the checkpoint at `path` was imported from ("Helsinki-NLP/opus-mt-en-de"), from its config.json; None
    for our own checkpoints and for one that cannot be read (loading it says why)."""
    try:
        source = read_config(path)[1].get("imported_from")
    except (CheckpointError, OSError):
        return None
    return source if isinstance(source, str) else None


def imported_note(source: str) -> str:
    """The caption under the picker for a checkpoint imported from `source` (`imported_from`).

    Not part of the picker's option labels: Streamlit accepts a bound widget's URL value only when it equals
    a shown label, so a link's ?model=NAME must be the folder's name, the same in every language."""
    return t("Imported from {source}.", source=shown_value(source))


def stored_decoding(path: str) -> DecodingSettings | None:
    """The beam and α stored with the checkpoint at `path` (config.json, no weights read); None when it stores
    none or cannot be read (loading it says why)."""
    try:
        return decoding_settings(read_config(path)[1])
    except (CheckpointError, OSError):
        return None


def averaged_count(path: str) -> int:
    """How many saved checkpoints the weights at `path` average (config.json's exported_from; no weights read)."""
    try:
        return len(averaged_from(read_config(path)[1]))
    except (CheckpointError, OSError):
        return 0


def decoding_note(settings: DecodingSettings, imported: bool = False) -> str:
    """'Decoding: beam 4, α 1.0 — chosen on validation, stored with the model.' in the session's language; an
    imported model's are its publisher's, with Marian's length normalisation."""
    if imported:
        return t(
            "Decoding: beam {beam}, length normalisation score ÷ length^{alpha} — the imported model's own settings.",
            beam=settings.beam,
            alpha=settings.alpha,
        )
    return t(
        "Decoding: beam {beam}, α {alpha} — chosen on validation, stored with the model.",
        beam=settings.beam,
        alpha=settings.alpha,
    )


def _load_upload() -> None:
    """on_click of "Load uploaded checkpoint": a callback, so it may select the new checkpoint before the
    selectbox is drawn in the rerun that follows."""
    files = st.session_state.get(UPLOAD_KEY) or []
    try:
        saved = session_uploads().save({f.name: f.getvalue() for f in files})
    except CheckpointError as error:
        st.session_state[_UPLOAD_ERROR] = str(error)
    else:
        st.session_state.pop(_UPLOAD_ERROR, None)
        st.session_state[MODEL_KEY] = f"{UPLOADED}{saved.name}"


def _default(choices: dict[str, str]) -> str:
    return DEFAULT_CHECKPOINT if DEFAULT_CHECKPOINT in choices else next(iter(choices))


def _settle_choice(choices: dict[str, str]) -> None:
    """Before the selectbox is drawn: replace a choice that no longer exists, saying so."""
    wanted = st.session_state.get(MODEL_KEY)
    if wanted is not None and wanted not in choices:
        fallback = _default(choices)
        st.warning(
            t(
                "The checkpoint **{gone}** is gone (its folder was deleted or renamed); showing **{shown}** instead.",
                gone=shown_value(wanted),
                shown=shown_value(fallback),
            ),
            icon=":material/folder_off:",
        )
        st.session_state[MODEL_KEY] = fallback
        return
    raw = st.query_params.get(MODEL_KEY)
    if wanted is None and raw is not None and raw not in choices:  # the session's first run, from a link
        st.warning(
            t(
                "The link asks for checkpoint **{wanted}**, which this server does not have; showing **{shown}**.",
                wanted=shown_value(raw),
                shown=shown_value(_default(choices)),
            ),
            icon=":material/link_off:",
        )


def sidebar() -> Selection | None:
    """Checkpoint and device pickers, drawn in the sidebar; the current selection (None: no checkpoint)."""
    choices = checkpoint_choices()
    with st.sidebar:
        st.markdown(t("### Model"))
        if not choices:
            st.warning(t("No checkpoint found in `checkpoints/`. Train one on the **Train** page or upload one."))
        else:
            _settle_choice(choices)
            labels = list(choices)
            st.selectbox(
                t("Checkpoint"),
                labels,
                index=labels.index(_default(choices)),
                key=MODEL_KEY,
                bind="query-params",
                help=t("Every folder in checkpoints/, plus checkpoints you uploaded."),
            )
            chosen = choices[st.session_state[MODEL_KEY]]
            source = imported_from(chosen)
            if source is not None:
                st.caption(imported_note(source))
            settings = stored_decoding(chosen)
            if settings is not None:
                st.caption(decoding_note(settings, imported=source is not None))
            if (averaged := averaged_count(chosen)) > 1:
                st.caption(
                    t("Weights: the average of its last {n} saves (checkpoint averaging, Section 6.1).", n=averaged)
                )
        devices = available_devices()
        if st.session_state.get(DEVICE_KEY) not in devices:
            st.session_state[DEVICE_KEY] = devices[0]
        st.selectbox(t("Device"), devices, key=DEVICE_KEY, help=t("CUDA is used automatically when present."))
        with st.expander(t("Upload a checkpoint")):
            files = st.file_uploader(
                t("config.json, model.safetensors and tokenizer.model"), accept_multiple_files=True, key=UPLOAD_KEY
            )
            st.button(t("Load uploaded checkpoint"), on_click=_load_upload, disabled=not files)
            if st.session_state.get(_UPLOAD_ERROR):
                st.error(t("Not loaded: {error}", error=shown_value(st.session_state[_UPLOAD_ERROR], ERROR_CHARS)))
            st.caption(t("Uploads are private to this browser tab and deleted when it closes."))
    if not choices:
        return None
    path = choices[st.session_state[MODEL_KEY]]
    return Selection(path, st.session_state[DEVICE_KEY], weights_version(path))
