"""3 · Model: a preset (tiny, small, the paper's base) and its knobs, checked into a `ModelConfig`."""

from __future__ import annotations

import dataclasses

import streamlit as st

from explorer.config import PRESETS, ModelConfig, count_parameters
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.train.continued import continued
from ui.train.state import apply_preset, choice_buttons

D_MODELS = (16, 32, 64, 128, 256, 512, 768, 1024)
HEADS = (1, 2, 4, 8, 16)
D_FFS = (32, 64, 128, 256, 512, 1024, 2048, 4096)


def preset_labels() -> dict[str, str]:
    return {"tiny": t("Tiny (seconds on a CPU)"), "small": t("Small (Multi30k)"), "base": t("Paper base (Table 3)")}


def model_section(vocab_size: int) -> ModelConfig | None:
    st.subheader(t("3 · Model"))
    going_on = continued()
    if going_on is not None:
        config = going_on.checkpoint.config
        st.caption(
            t(
                "The loaded model's own settings: {n_encoder_layers} + {n_decoder_layers} layers, d_model "
                "{d_model}, {n_heads} heads, d_ff {d_ff}, dropout {dropout}.",
                **dataclasses.asdict(config),
            )
        )
        return config
    help = t("Sets the knobs below; change any of them afterwards.")
    choice_buttons(t("Preset"), preset_labels(), "train_preset", apply_preset, help)
    cols = st.columns(5)
    layers = cols[0].slider(t("Layers (N)"), 1, 8, key="train_layers", help=t("Encoder and decoder layers each."))
    d_model = cols[1].select_slider("d_model", D_MODELS, key="train_d_model", help=t("Width of every token vector."))
    heads = cols[2].select_slider(t("Heads (h)"), HEADS, key="train_heads", help=t("Must divide d_model."))
    d_ff = cols[3].select_slider("d_ff", D_FFS, key="train_d_ff", help=t("Inner width of the feed-forward layer."))
    dropout = cols[4].slider(t("Dropout"), 0.0, 0.5, step=0.05, key="train_dropout", help=t("Section 5.4: 0.1."))
    base = PRESETS[st.session_state["train_preset"]]
    try:
        config = base.replace(
            vocab_size=vocab_size,
            n_encoder_layers=layers,
            n_decoder_layers=layers,
            d_model=d_model,
            n_heads=heads,
            d_ff=d_ff,
            dropout=float(dropout),
        )
    except ValueError as error:
        st.error(t("Not a valid model: {error}", error=shown_value(error, ERROR_CHARS)), icon=":material/error:")
        return None
    st.metric(
        t("Parameters"),
        f"{count_parameters(config):,}",
        help=t(
            "Counted exactly from the configuration (the paper's base "
            "model: 65 million with a 37,000-piece vocabulary)."
        ),
    )
    return config
