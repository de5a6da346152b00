"""Models and results shared by every browser session of this server process.

The model is loaded once per (checkpoint, device, version) with `st.cache_resource` and used read-only by
every session: nothing a session does mutates it (attention comes back as values). Its int8 copy for batch
uploads (explorer/quantize.py) is one more shared resource per (checkpoint, version), made from the CPU float
model and never stored on it. Translations and the attention maps derived from them go into one cache bounded
by memory (ui/result_cache.py): at most `RESULT_BUDGET_MB` of arrays in all, each entry recomputed after
`RESULT_TTL_S`; an int8 result is keyed apart from the float one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import streamlit as st
import torch

from explorer.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from explorer.devices import resolve_device
from explorer.inference import EXTRA_OUTPUT_TOKENS, DecodeOptions, Translation
from explorer.model import Transformer
from explorer.serving import translate_served
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.model_picker import Selection
from ui.result_cache import MB, MemoryBoundedCache

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11; installed with torch

T = TypeVar("T")
# What a page gets unless it asks otherwise: greedy, one result, with every attention map (the views draw them).
APP_DECODING: DecodeOptions = {
    "beam_size": 1,
    "alpha": 0.6,
    "with_attention": True,
    "with_trace": False,
    "n_best": 1,
    "max_extra_tokens": EXTRA_OUTPUT_TOKENS,
}
RESULT_BUDGET_MB = 256
RESULT_TTL_S = 3600.0  # an hour: a lecture's worth; afterwards results are recomputed from the current weights


@st.cache_resource(show_spinner=False, max_entries=6)  # callers show a spinner in the session's language
def load_model(path: str, device: str, version: float) -> Checkpoint:
    """One shared, eval-mode model per checkpoint/device/version. `version` is only part of the cache key."""
    return load_checkpoint(path, resolve_device(device))


@st.cache_resource(show_spinner=False, max_entries=3)  # the batch upload shows its own (translated) spinner
def load_int8_model(path: str, version: float) -> Transformer:
    """One shared int8 copy per checkpoint/version: the CPU float model with its feed-forward layers quantized
    (explorer/quantize.py). A copy, so the float model every attention view reads stays as it was."""
    from explorer.quantize import quantize_int8  # only when a session asks for int8: nothing added to start-up

    return quantize_int8(load_model(path, "cpu", version).model)


def int8_unavailable(device: str) -> bool:
    """int8 runs on the CPU only (dynamically quantized layers have no CUDA kernels)."""
    return torch.device(device).type != "cpu"


@st.cache_resource
def result_cache() -> MemoryBoundedCache:
    """The process's one cache of translations and attention maps."""
    return MemoryBoundedCache(RESULT_BUDGET_MB * MB, ttl_s=RESULT_TTL_S)


def cached(kind: str, selection: Selection, key: Hashable, compute: Callable[[Checkpoint], T]) -> T:
    """`compute(model)` for `selection`, cached under (kind, checkpoint, device, version, key)."""
    full_key = (kind, selection.path, selection.device, selection.version, key)
    return result_cache().get_or_compute(
        full_key, lambda: compute(load_model(selection.path, selection.device, selection.version))
    )


def translate_for(
    selection: Selection, sentences: list[str], *, int8: bool = False, **chosen: Unpack[DecodeOptions]
) -> list[Translation]:
    """Translations (with attention unless `with_attention=False`, and an optional beam trace), cached by
    everything they depend on: `chosen` are `translate`'s options, over the app's defaults (`APP_DECODING`).
    `int8` translates with the shared int8 copy (CPU only, without attention: the attention views show the float
    model's weights); the flag is part of the cache key, so float and int8 results never stand in for each other.
    """
    options: DecodeOptions = {**APP_DECODING, **chosen}
    if options.get("no_repeat_ngram") is None:  # only when set: the cache keys of unconstrained results stay apart
        options.pop("no_repeat_ngram", None)
    if int8 and options["with_attention"]:
        raise ValueError("int8 translations come without attention: the attention views use the float model")
    if int8 and int8_unavailable(selection.device):
        raise ValueError(f"int8 runs on the CPU only, but the model is on {selection.device!r}")

    def compute(ck: Checkpoint) -> list[Translation]:
        model = load_int8_model(selection.path, selection.version) if int8 else ck.model
        # translate_served batches one-sentence requests that arrive together (a classroom pressing Translate).
        return translate_served(model, ck.tokenizer, list(sentences), **options)

    return cached("translate", selection, (tuple(sentences), tuple(sorted(options.items())), int8), compute)


def current_model(selection: Selection) -> Checkpoint | None:
    """The shared model for `selection`, or None after showing why it could not be loaded."""
    try:
        with st.spinner(t("Loading model {name}…", name=selection.name)):
            return load_model(selection.path, selection.device, selection.version)
    except CheckpointError as error:
        st.error(
            t(
                "Cannot load checkpoint {name}: {error}",
                name=shown_value(selection.name),
                error=shown_value(_named(str(error), selection.path, selection.name), ERROR_CHARS),
            )
        )
        return None


def require_model() -> tuple[Selection, Checkpoint]:
    """The page's selection and shared model (chosen in the frame's sidebar); stops the page with a message
    when there is none."""
    selection = st.session_state.get("selection")
    if selection is None:
        st.info(t("Load or train a checkpoint to use this page."))
        st.stop()
    checkpoint = current_model(selection)
    if checkpoint is None:
        st.stop()
    return selection, checkpoint


def _named(message: str, folder: str | Path, name: str) -> str:
    """`message` with the server's path of a checkpoint folder replaced by the checkpoint's name, as the picker
    shows it ("/srv/…/checkpoints/diverged/model.safetensors" -> "diverged/model.safetensors")."""
    for root in dict.fromkeys((str(folder), os.path.realpath(folder))):
        message = message.replace(root, name)
    return message
