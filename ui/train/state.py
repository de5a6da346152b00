"""The train page's knobs, kept in `st.session_state` under "train_*" keys: their first values, the values
each data source and model preset sets, and the keys kept while the Watch view hides their widgets (so a run
is set up once per session)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from explorer.config import PRESETS

# Per data source: knobs for a sensible first run on a laptop (the paper trains base for 100k steps with
# 4000 warm-up steps and about 25,000 tokens per batch: Section 5). The synthetic run evaluates every 50 steps
# and also at steps 10, 20 and 40 (`eval_early`): its attention forms around step 350 (about 25 s on two
# cores), and a class should see it take shape within the first minute. The larger presets' evaluations
# (BLEU on 100-200 sentences of real text) cost too much to add more.
_KNOBS = ("preset", "vocab", "steps", "warmup", "batch_tokens", "eval_every", "bleu", "save_every", "eval_early")
# fmt: off
DEFAULTS = {
    source: dict(zip(_KNOBS, values, strict=True))
    for source, *values in (
        # source     preset   vocab steps warmup batch_tokens eval_every bleu save_every eval_early
        ("synthetic", "tiny",    64,  600,  100,  1024,        50,       100,  200,       True),
        ("multi30k",  "small", 8000, 5000, 1000,  4096,       500,       200,  500,       False),
        ("upload",    "small", 4000, 5000, 1000,  2048,       500,       100,  500,       False),
    )
}
# fmt: on


def choice_buttons(
    label: str, labels: dict[str, str], key: str, on_change: Callable[[], None], help: str | None = None
) -> str:
    """One of `labels`' keys, picked by its label on a row of buttons and kept under `key`; `on_change` sets the
    knobs that follow from the choice."""
    chosen = st.segmented_control(
        label, tuple(labels), key=key, required=True, format_func=labels.__getitem__, on_change=on_change, help=help
    )
    return str(chosen)


def apply_data_defaults() -> None:
    for key, value in DEFAULTS[st.session_state["train_data"]].items():
        st.session_state[f"train_{key}"] = value
    apply_preset()


def apply_preset() -> None:
    config = PRESETS[st.session_state["train_preset"]]
    st.session_state.update(
        train_layers=config.n_encoder_layers,
        train_d_model=config.d_model,
        train_heads=config.n_heads,
        train_d_ff=config.d_ff,
        train_dropout=config.dropout,
    )


# Knobs kept while their widgets are not drawn (on the Watch view), so a run is set up once per session.
PERSISTENT = (
    "train_data",
    "train_task",
    "train_pairs",
    "train_seq_len",
    "train_upload_mode",
    "train_vocab",
    "train_preset",
    "train_layers",
    "train_d_model",
    "train_heads",
    "train_d_ff",
    "train_dropout",
    "train_smoothing",
    "train_warmup",
    "train_batch_tokens",
    "train_seed",
    "train_duration",
    "train_steps",
    "train_epochs",
    "train_device",
    "train_eval_every",
    "train_eval_early",
    "train_bleu",
    "train_save_every",
    "train_samples",
    "train_samples_for",
    "train_name",
    "train_name_auto",
    "train_save",
)


def init_state() -> None:
    """Widget defaults, once per session (the synthetic reverse task with the tiny model)."""
    if "train_data" not in st.session_state:
        st.session_state["train_data"] = "synthetic"
        st.session_state.update(
            train_task="reverse",
            train_pairs=5000,
            train_seq_len=10,
            train_upload_mode="two",
            train_smoothing=0.1,
            train_seed=0,
            train_duration="steps",
            train_epochs=5,
            train_save=True,
        )
        apply_data_defaults()
    for key in PERSISTENT:  # Streamlit forgets a widget's value when the widget is not drawn in a run
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
