"""What every stop's view is given and the pieces they share: the tour's context (model, sentence,
translation, language), compact layer and head pickers, and the stop's main figure under a stable key.

Every figure is computed from the loaded checkpoint on the tour's sentence (cached in ui/tour/state.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.config import ModelConfig
from explorer.inference import Translation
from ui.figures import show_figure
from ui.i18n import t
from ui.model_picker import Selection


@dataclass(frozen=True)
class TourContext:
    selection: Selection
    checkpoint: Checkpoint
    sentence: str
    translation: Translation
    lang: str

    @property
    def config(self) -> ModelConfig:
        return self.checkpoint.config


# What a stop's view returns: the 1-based (layer, head) it shows, None where it shows none.
Shown = tuple[int | None, int | None]
View = Callable[[TourContext], Shown]


def pick(label: str, key: str, count: int, default: int = 1) -> int:
    """A 1-based layer/head choice as a compact button row (kept in the session, not the URL)."""
    if st.session_state.get(key) not in range(1, count + 1):
        st.session_state[key] = min(max(default, 1), count)
    chosen = st.segmented_control(label, list(range(1, count + 1)), key=key, required=True)
    assert chosen is not None, "a required segmented control always has a value"
    return int(chosen)


def layer_and_head(ctx: TourContext, prefix: str) -> tuple[int, int]:
    """Encoder layer and head pickers side by side where they fit, one under the other where they do not (a
    horizontal container wraps whole widgets; columns would squeeze a row of head buttons onto two lines)."""
    with st.container(horizontal=True, gap="large"):
        layer = pick(t("Layer"), f"{prefix}_layer", ctx.config.n_encoder_layers)
        head = pick(t("Head"), f"{prefix}_head", ctx.config.n_heads)
    return layer, head


def stop_figure(fig: go.Figure, name: str, stop: str, **kwargs: Any) -> Any:
    """The stop's main figure, under the key `tour_figure_<stop key>` the tests and the browser look for."""
    return show_figure(fig, name, key=f"tour_figure_{stop}", **kwargs)
