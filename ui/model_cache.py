"""Models and results shared by every browser session of this server process.

The model is loaded once per (checkpoint, device, version) with `st.cache_resource` and used read-only by
every session: nothing a session does mutates it (attention comes back as values). Translations and the
attention maps derived from them go into one cache bounded by memory (ui/result_cache.py): at most
`RESULT_BUDGET_MB` of arrays in all, each entry recomputed after `RESULT_TTL_S`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import streamlit as st

from explorer.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from explorer.devices import resolve_device
from explorer.inference import EXTRA_OUTPUT_TOKENS, Translation
from explorer.serving import translate_served
from ui.i18n import t
from ui.model_picker import Selection
from ui.result_cache import MB, MemoryBoundedCache

T = TypeVar("T")
RESULT_BUDGET_MB = 256
RESULT_TTL_S = 3600.0  # an hour: a lecture's worth; afterwards results are recomputed from the current weights


@st.cache_resource(show_spinner="Loading model…", max_entries=6)
def load_model(path: str, device: str, version: float) -> Checkpoint:
    """One shared, eval-mode model per checkpoint/device/version. `version` is only part of the cache key."""
    return load_checkpoint(path, resolve_device(device))


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
    selection: Selection,
    sentences: list[str],
    *,
    beam_size: int = 1,
    alpha: float = 0.6,
    with_attention: bool = True,
    with_trace: bool = False,
    n_best: int = 1,
    max_extra_tokens: int = EXTRA_OUTPUT_TOKENS,
    no_repeat_ngram: int | None = None,
) -> list[Translation]:
    """Translations (with attention and optional beam trace), cached by everything they depend on."""
    options: dict[str, Any] = dict(
        beam_size=beam_size,
        alpha=alpha,
        with_attention=with_attention,
        with_trace=with_trace,
        n_best=n_best,
        max_extra_tokens=max_extra_tokens,
    )
    if no_repeat_ngram is not None:  # only when set: the cache keys of unconstrained results stay as they were
        options["no_repeat_ngram"] = no_repeat_ngram
    return cached(
        "translate",
        selection,
        (tuple(sentences), tuple(sorted(options.items()))),
        # translate_served batches one-sentence requests that arrive together (a classroom pressing Translate).
        lambda ck: translate_served(ck.model, ck.tokenizer, list(sentences), **options),
    )


def current_model(selection: Selection) -> Checkpoint | None:
    """The shared model for `selection`, or None after showing why it could not be loaded."""
    try:
        return load_model(selection.path, selection.device, selection.version)
    except CheckpointError as error:
        st.error(t("Cannot load checkpoint {name}: {error}", name=selection.name, error=error))
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
