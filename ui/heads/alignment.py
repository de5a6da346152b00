"""The Heads page's word-alignment section: the best and worst cross-attention heads as word aligners (AER on
Multi30k test2016 against the project's reference, as read and shifted by one; explorer/explain/head_alignment.py,
the numbers `explorer heads align` prints), and the chosen head's links over a test pair's reference, raw or
value-weighted."""

from __future__ import annotations

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.explain.alignment import AlignmentScores
from ui.attention_controls import weighting_switch
from ui.explain.alignment import alignment_scores
from ui.explain.overlay import overlay_available, overlay_section
from ui.i18n import t
from ui.model_picker import Selection

SENTENCES = 100  # test2016 pairs scored: a few seconds on a CPU, and the same ranking as all 1000 to a few heads
NAMED = 3  # best and worst heads named


def ranked_rows(read: AlignmentScores, shifted: AlignmentScores) -> list[dict[str, object]]:
    """Every head, the best aligner (lowest AER as read) first: its name, 1-based layer and head, both AERs."""
    rows = []
    for layer, head, value in read.ranked():
        rows.append(
            {
                t("name"): f"cross.{layer}.{head}",
                t("Layer"): layer + 1,
                t("Head"): head + 1,
                t("AER as read"): round(value, 3),
                t("AER shifted by one word"): round(float(shifted.heads[layer, head]), 3),
            }
        )
    return rows


def alignment_heads_section(selection: Selection, checkpoint: Checkpoint, sentence: str | None) -> None:
    """The heads that align words best and worst, the table of every head, and the best head's links over a
    reference alignment (the test2016 pair of `sentence` when it is one)."""
    st.subheader(t("Which heads align words"))
    if not overlay_available(checkpoint):
        st.info(
            t(
                "The alignment scores need a model that translates English into German and the Multi30k test "
                "set (../shared/data/multi30k)."
            ),
            icon=":material/info:",
        )
        return
    scores = alignment_scores(selection, SENTENCES)
    if scores is None:
        return
    read, shifted = scores
    ranked = read.ranked()
    name = "cross.{}.{} ({:.2f})".format
    st.markdown(
        t(
            "Best word aligners (AER on {n} test2016 pairs, lower is better): {best}. Worst: {worst}. "
            "Shifted by one word, the best is {shift}.",
            n=read.sentences,
            best=", ".join(name(*r) for r in ranked[:NAMED]),
            worst=", ".join(name(*r) for r in ranked[::-1][:NAMED]),
            shift=name(*shifted.ranked()[0]),
        )
    )
    with st.expander(t("Every cross-attention head's AER")):
        st.dataframe(ranked_rows(read, shifted), hide_index=True, key="h_align_table")
    weighting = weighting_switch()
    best_layer, best_head, _ = ranked[0]
    overlay_section(
        selection, checkpoint, prefix="h_align", weighting=weighting, sentence=sentence,
        head=(best_layer + 1, best_head + 1),
    )  # fmt: skip
