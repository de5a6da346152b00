"""Train: set up a Transformer, train it in a process of its own, and watch its loss, learning rate, BLEU and
cross-attention change (Section 5 of the paper)."""

from __future__ import annotations

import streamlit as st

from ui.i18n import t
from ui.train.data import data_section
from ui.train.model import model_section
from ui.train.runs import manager
from ui.train.start import start_section
from ui.train.state import init_state
from ui.train.tokenizer import tokenizer_section
from ui.train.training import training_section
from ui.train.watch import watch_section
from ui.urlstate import bound_choice

init_state()
st.title(t("Train a Transformer"))
st.markdown(
    t(
        "Pick data, build a tokenizer and a model, and train it with the paper's recipe (Section 5): Adam with "
        "the warm-up learning-rate schedule of Eq. 3, label smoothing and dropout. Training runs in a process of "
        "its own on this machine, at lower priority: switch pages, reload, or come back from another browser and "
        "it keeps going. While it trains, watch the loss fall and the cross-attention of a few sentences take shape."
    )
)

views = {"new": t("New run"), "watch": t("Watch runs")}
view = bound_choice(
    st.segmented_control,
    t("View"),
    tuple(views),
    "train_view",
    "watch" if manager().names() else "new",
    required=True,
    format_func=views.get,
    label_visibility="collapsed",
)

if view == "watch":
    watch_section()
    st.stop()

choice = data_section()
if choice is None:
    st.stop()
tokenizer = tokenizer_section(choice)
if tokenizer is None:
    st.stop()
config = model_section(tokenizer.vocab_size)
if config is None:
    st.stop()
train_config = training_section(choice, tokenizer, config)
start_section(choice, tokenizer, config, train_config)
