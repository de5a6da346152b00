"""4 · Training: the recipe's knobs (label smoothing, warm-up, batch size, seed), the run's length in steps or
epochs, its device, evaluations, checkpoints and watched sentences, as a `TrainConfig`."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.config import ModelConfig
from explorer.data import ParallelCorpus
from explorer.devices import available_devices
from explorer.tokenizer import Tokenizer
from explorer.tour.recipe import optimizer_and_dropout
from explorer.training.estimate.plan import batches_per_epoch
from explorer.training.train_config import TrainConfig
from ui.i18n import current_language, t
from ui.train.data import DataChoice

BATCH_TOKENS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 25000)
MAX_SAMPLES = 4  # sentences whose attention is watched


@st.cache_data(show_spinner=False, max_entries=16)
def epoch_steps(
    key: str, vocab: int, batch_tokens: int, max_len: int, _tokenizer: Tokenizer, _train: ParallelCorpus
) -> int:
    return batches_per_epoch(_tokenizer, _train, batch_tokens, max_len)


# Whole-number knobs (kept in session state as "train_<name>") run from 1 to a million, but these.
RANGES = {"warmup": (1, 50_000), "seed": (0, 1_000_000), "epochs": (1, 1000), "bleu": (0, 5000)}


def whole_number(column: Any, label: str, knob: str, help: str | None = None) -> int:
    """An integer `st.number_input` in `column` within the knob's range (`RANGES`), kept under "train_<knob>"."""
    low, high = RANGES.get(knob, (1, 1_000_000))
    return int(column.number_input(label, low, high, key=f"train_{knob}", help=help))


def training_section(choice: DataChoice, tokenizer: Tokenizer, config: ModelConfig) -> TrainConfig:
    st.subheader(t("4 · Training"))
    cols = st.columns(4)
    smoothing = cols[0].slider(
        t("Label smoothing"), 0.0, 0.3, step=0.05, key="train_smoothing", help=t("Section 5.4: ε = 0.1.")
    )
    warmup = whole_number(
        cols[1],
        t("Warm-up steps"),
        "warmup",
        t("The learning rate rises for this many steps, then decays (Eq. 3; the paper: 4000)."),
    )
    batch_tokens = cols[2].select_slider(
        t("Batch tokens"),
        BATCH_TOKENS,
        key="train_batch_tokens",
        help=t("Padded tokens per batch and side (the paper: about 25,000)."),
    )
    seed = whole_number(cols[3], t("Seed"), "seed")
    cols = st.columns(4)
    unit = cols[0].radio(
        t("Train for"),
        ("steps", "epochs"),
        key="train_duration",
        horizontal=True,
        format_func={"steps": t("steps"), "epochs": t("epochs")}.get,
    )
    with st.spinner(t("Counting batches…")):
        per_epoch = epoch_steps(choice.key, tokenizer.vocab_size, batch_tokens, config.max_len, tokenizer, choice.train)
    if unit == "steps":
        steps = whole_number(cols[1], t("Steps"), "steps")
    else:
        epochs = whole_number(cols[1], t("Epochs"), "epochs")
        steps = epochs * per_epoch
    cols[1].caption(
        t("1 epoch = {per_epoch} steps; this run: {steps} steps.", per_epoch=f"{per_epoch:,}", steps=f"{steps:,}")
    )
    devices = available_devices()
    if st.session_state.get("train_device") not in devices:
        st.session_state["train_device"] = st.session_state.get("device", devices[0])
    device = str(
        cols[2].selectbox(
            t("Device"),
            devices,
            key="train_device",
            help=t("A GPU trains one run at a time; a second run waits for it or uses the CPU."),
        )
    )
    eval_every = whole_number(
        cols[3],
        t("Evaluate every (steps)"),
        "eval_every",
        t("Validation loss, BLEU and the watched sentences' attention."),
    )
    with st.expander(t("More: BLEU sentences, checkpoints")):
        left, right = st.columns(2)
        bleu = whole_number(
            left, t("BLEU on this many validation sentences"), "bleu", t("Greedy decoding; 0 skips BLEU.")
        )
        save_every = whole_number(
            right,
            t("Save latest/ every (steps)"),
            "save_every",
            t("A periodic checkpoint the run can be resumed from if its process stops."),
        )
    # Adam's settings are not knobs here: every run uses the paper's (TrainConfig's defaults).
    adam = (TrainConfig.adam_beta1, TrainConfig.adam_beta2, TrainConfig.adam_eps)
    st.caption(optimizer_and_dropout(adam, config.dropout, current_language()))
    if st.session_state.get("train_samples_for") != choice.key:
        st.session_state["train_samples"] = "\n".join(choice.val.source[:2])
        st.session_state["train_samples_for"] = choice.key
    text = st.text_area(
        t("Sentences to watch (one per line, at most {n})", n=MAX_SAMPLES),
        key="train_samples",
        height=100,
        help=t("Translated at every evaluation, with their cross-attention, so you can watch it form."),
    )
    samples = tuple(line.strip() for line in text.splitlines() if line.strip())
    if len(samples) > MAX_SAMPLES:
        st.warning(t("Only the first {n} sentences are watched.", n=MAX_SAMPLES), icon=":material/warning:")
        samples = samples[:MAX_SAMPLES]
    return TrainConfig(
        steps=steps,
        batch_tokens=int(batch_tokens),
        warmup_steps=warmup,
        label_smoothing=float(smoothing),
        seed=seed,
        max_len=config.max_len,
        log_every=max(1, min(10, steps // 200)),
        eval_every=eval_every,
        eval_early=bool(st.session_state.get("train_eval_early", False)),
        save_every=save_every,
        keep_last=2,
        bleu_sentences=bleu,
        device=device,
        sample_sentences=samples,
    )
