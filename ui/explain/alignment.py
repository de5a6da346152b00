"""Cross-attention heads as word aligners: the AER of every head on Multi30k test2016 against the project's
reference alignments, as read and shifted by one (explorer/explain/head_alignment.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.data.multi30k import load_multi30k, multi30k_available
from explorer.explain.alignment import AlignmentScores, NoMatchingPairs
from explorer.explain.head_alignment import MULTI30K_TEST2016, align_heads, read_reference
from explorer.figures.explain import layer_head_heatmaps
from explorer.figures.theme import WEIGHT_COLORSCALE
from ui.attention_view import data_kind
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.model_cache import cached
from ui.model_picker import Selection
from ui.urlstate import bound_select_slider

SENTENCE_COUNTS = (20, 100, 250, 1000)  # test2016 has 1000 pairs; 100 take a few seconds on a CPU


def alignment_scores(selection: Selection, count: int) -> list[AlignmentScores] | None:
    """AER of every head on the first `count` test2016 pairs, as read and shifted by one; cached per checkpoint, with
    a progress bar while it computes (all 1000 pairs take about 20 s on a busy CPU, benchmarks/explain.py). None,
    with a note on the page, where the model's pieces never join into the reference's words."""
    bar = st.empty()

    def moved(done: int, total: int) -> None:
        bar.progress(done / total, text=t("Reading {n} reference translations through every cross-attention head…",
                                          n=total))  # fmt: skip

    def compute(checkpoint: Checkpoint) -> list[AlignmentScores]:
        test = load_multi30k("test2016")
        assert test.dropped == 0, "the reference has a line for every test2016 pair, so none may be dropped"
        references = read_reference(MULTI30K_TEST2016)[:count]
        sources, targets = list(test.source[:count]), list(test.target[:count])
        return align_heads(checkpoint.model, checkpoint.tokenizer, sources, targets, references, progress=moved)

    try:
        scores = cached("explain_alignment", selection, count, compute)
    except NoMatchingPairs:
        st.info(
            t(
                "This model's pieces do not join into the reference's words on any test2016 pair, so no head "
                "can be scored against the reference alignment."
            ),
            icon=":material/info:",
        )
        return None
    finally:
        bar.empty()
    return scores


def alignment_section(side: Any, selection: Selection, checkpoint: Checkpoint) -> None:
    """AER heatmaps (as read, shifted by one) and the best and worst heads, for an English–German model."""
    if data_kind(checkpoint.metadata) != "natural" or not multi30k_available():
        st.info(
            t(
                "The alignment scores need a model that translates English into German and the Multi30k test "
                "set (../shared/data/multi30k)."
            ),
            icon=":material/info:",
        )
        return
    with side:
        count = int(bound_select_slider(st, t("Sentences of test2016"), SENTENCE_COUNTS, "x_align_n", 100))
    scores = alignment_scores(selection, count)
    if scores is None:
        return
    read, shifted = scores
    grids = {
        t("as read"): np.column_stack([read.heads, read.layers]),
        t("shifted by one word"): np.column_stack([shifted.heads, shifted.layers]),
    }
    title = t("Alignment error rate of each head (lower is better) · {n} sentences", n=read.sentences)
    figure = layer_head_heatmaps(
        grids, title=title, value_name="AER", value_range=(0.0, 1.0), colorscale=WEIGHT_COLORSCALE,
        lang=current_language(),
    )  # fmt: skip
    show_figure(figure, "alignment error rate", key="explain_alignment")
    ranked = read.ranked()
    best, worst = ranked[0], ranked[-1]
    st.markdown(
        t(
            "Best aligner: **cross.{layer}.{head}** (AER {aer:.2f}); worst: **cross.{wl}.{wh}** (AER {waer:.2f}); "
            "best layer mean: layer {ml} (AER {maer:.2f}, layers counted from 1).",
            layer=best[0],
            head=best[1],
            aer=best[2],
            wl=worst[0],
            wh=worst[1],
            waer=worst[2],
            ml=int(np.argmin(read.layers)) + 1,
            maer=float(read.layers.min()),
        )
    )
    st.caption(
        t(
            "Each head, teacher-forced on the reference German, links every German word to the English word it "
            "weighs most; AER (Och & Ney, 2003) compares the links with a reference made by IBM Model 1 on the "
            "training set (0: every link right). Shifted: word j is read from the row after it. Heads are named "
            "FAMILY.LAYER.HEAD from 0, as on the command line (`explorer heads align`)."
        )
    )
