"""Watch attention form: a watched sentence's cross-attention at each snapshot of the run (step 0 and every
evaluation), one head at a time, and how it changed."""

from __future__ import annotations

from typing import TypeVar

import streamlit as st

from explorer.figures.attention import attention_heatmap
from explorer.figures.training import attention_evolution
from explorer.text.pieces import shown_pieces
from explorer.training.callbacks import SampleTranslation
from explorer.training.launcher import RunSnapshot
from explorer.training.snapshots import AttentionSnapshot
from ui.figures import show_figure
from ui.i18n import t
from ui.markdown import md_escape

T = TypeVar("T")


def follow_off(key: str) -> None:
    st.session_state[key] = False


def attention_section(snap: RunSnapshot) -> None:
    st.subheader(t("Watch attention form"))
    if not snap.attention:
        st.caption(
            t("No attention snapshots: this run watches no sentences.")
            if not snap.sample_sentences
            else t("The watched sentences' attention appears here at the first evaluation.")
        )
        return
    name = snap.name
    sentences = [s.source for s in snap.attention[-1].samples]
    steps = [s.step for s in snap.attention]
    cols = st.columns((3, 1, 1))
    # A box with options and a default never returns None; `or 0` says so to the type checker.
    index = (
        cols[0].selectbox(
            t("Sentence"), range(len(sentences)), key=f"train_att_sentence_{name}", format_func=lambda i: sentences[i]
        )
        or 0
    )
    shape = snap.attention[-1].samples[index].cross_attention.shape  # (layers, heads, output, source)
    layer = (
        cols[1].selectbox(
            t("Layer"),
            range(shape[0]),
            key=f"train_att_layer_{name}",
            format_func=lambda i: str(i + 1),
            index=shape[0] - 1,
        )
        or 0
    )
    head = (
        cols[2].selectbox(t("Head"), range(shape[1]), key=f"train_att_head_{name}", format_func=lambda i: str(i + 1))
        or 0
    )
    follow_key, step_key = f"train_att_follow_{name}", f"train_att_step_{name}"
    st.session_state.setdefault(follow_key, True)
    if st.session_state[follow_key] or st.session_state.get(step_key) not in steps:
        st.session_state[step_key] = steps[-1]
    if len(steps) > 1:
        step = st.select_slider(
            t("Snapshot (training step)"),
            steps,
            key=step_key,
            on_change=follow_off,
            args=(follow_key,),
            format_func=lambda s: f"{s:,}",
            help=t("Attention is recorded at step 0 and at every evaluation."),
        )
        st.toggle(t("Follow the newest snapshot"), key=follow_key)
    else:
        step = steps[0]
    position = steps.index(step)
    sample = sentence_in(snap.attention[position], index)
    rows = shown_rows(sample)
    words = sample.output.split()
    output = " ".join(words[:rows]) + (" …" if len(words) > rows else "")
    st.markdown(
        t(
            "At step **{step}** the model translates *{source}* → **{output}**",
            step=f"{step:,}",
            source=md_escape(sample.source),
            output=md_escape(output) or t("(nothing)"),
        )
    )
    weights = sample.cross_attention[layer, head, :rows]
    show_figure(
        attention_heatmap(
            weights,
            shown_pieces(sample.output_pieces[:rows]),
            shown_pieces(sample.source_pieces),
            x_title=t("source (keys)"),
            y_title=t("output (queries)"),
            title=t(
                "Cross-attention, layer {layer}, head {head}, step {step}",
                layer=layer + 1,
                head=head + 1,
                step=f"{step:,}",
            ),
        ),
        f"{name} cross-attention L{layer + 1} H{head + 1} step {step}",
        key=f"train_att_map_{name}",
    )
    if rows < len(sample.output_pieces):
        st.caption(
            t(
                "The first {rows} of {total} output tokens: a model that has not learnt to stop yet keeps "
                "going until the length limit.",
                rows=rows,
                total=len(sample.output_pieces),
            )
        )
    # Four snapshots: at a narrow width the panels stack, one above the other.
    chosen = evenly_spaced(list(range(position + 1)), 4)
    if len(chosen) > 1:
        picked = [snap.attention[i] for i in chosen]
        samples = [sentence_in(p, index) for p in picked]
        fig = attention_evolution(
            [s.cross_attention[layer, head, : shown_rows(s)] for s in samples],
            [p.step for p in picked],
            [shown_pieces(s.output_pieces[: shown_rows(s)]) for s in samples],
            shown_pieces(samples[0].source_pieces),
            title=t("Layer {layer}, head {head} during training", layer=layer + 1, head=head + 1),
        )
        show_figure(fig, f"{name} attention evolution L{layer + 1} H{head + 1}", key=f"train_att_evolution_{name}")


def sentence_in(snapshot: AttentionSnapshot, index: int) -> SampleTranslation:
    """The `index`-th watched sentence of a snapshot (the last one when an older snapshot holds fewer)."""
    return snapshot.samples[min(index, len(snapshot.samples) - 1)]


def shown_rows(sample: SampleTranslation) -> int:
    """Output rows worth drawing: an untrained model rambles on for 50 tokens past the source's length."""
    return min(len(sample.output_pieces), max(len(sample.source_pieces) + 4, 12))


def evenly_spaced(items: list[T], n: int) -> list[T]:
    """Up to `n` items including the first and the last, evenly spaced."""
    if len(items) <= n:
        return items
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]
