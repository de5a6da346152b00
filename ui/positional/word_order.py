"""Word order, live (Section 3.5): a sentence and the same words swapped, through the loaded model's encoder
with and without the positional encoding. Shown on the Positional encoding page and in the tour's stop 5."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from explorer.analysis.word_order import DEFAULT_PAIR, KOREAN_PAIR, WordOrder, word_order
from explorer.figures.memo import remembered
from explorer.figures.paper_live import word_order_figure
from ui.figures import show_figure
from ui.i18n import t
from ui.markdown import md_escape
from ui.model_cache import cached
from ui.model_picker import Selection

# (label's msgid, widget key, count) -> the 1-based choice; each page passes its own kind of picker.
Picker = Callable[[str, str, int], int]

# Built once per distinct head and sentence pair (explorer/figures/memo.py): the page and the tour's stop 5 redraw
# the same four maps on every rerun.
word_order_figure_for = remembered()(word_order_figure)


def computed_word_order(selection: Selection, original: str, swapped: str) -> WordOrder:
    return cached(
        "word_order", selection, (original, swapped), lambda ck: word_order(ck.model, ck.tokenizer, original, swapped)
    )


def word_order_section(selection: Selection, lang: str, prefix: str, choose: Picker) -> None:
    """Two sentences (the second the first's words reordered), the attention of one encoder head for both with
    and without positions, the numerical check, and the translations."""
    st.markdown(
        t(
            "Self-attention alone is blind to word order: swap two words and, without positional encoding, the "
            "encoder computes the same numbers, only permuted. Run the encoder on both sentences with and without "
            "the positional encoding:"
        )
    )
    if lang == "ko":
        st.info(
            t(
                "The Korean example \u201c{first}\u201d / \u201c{second}\u201d makes the same point: the same words "
                "in another order. This model reads English (it translates English into German), so the live run "
                "below uses an English pair.",
                first=KOREAN_PAIR[0],
                second=KOREAN_PAIR[1],
            )
        )
    left, right = st.columns(2)
    original = left.text_input(t("Sentence"), DEFAULT_PAIR[0], key=f"{prefix}_wo_original").strip()
    swapped = right.text_input(t("The same words, reordered"), DEFAULT_PAIR[1], key=f"{prefix}_wo_swapped").strip()
    if not original or not swapped:
        st.info(t("Type two sentences."))
        return
    result = computed_word_order(selection, original, swapped)
    layers, heads, _, _ = result.with_pe[0].attention.shape
    with st.container(horizontal=True, gap="large"):
        layer = choose("Layer", f"{prefix}_wo_layer", layers)
        head = choose("Head", f"{prefix}_wo_head", heads)
    show_figure(
        word_order_figure_for(
            (result.with_pe[0].attention[layer - 1, head - 1], result.with_pe[1].attention[layer - 1, head - 1]),
            (result.without_pe[0].attention[layer - 1, head - 1], result.without_pe[1].attention[layer - 1, head - 1]),
            result.original_pieces,
            result.swapped_pieces,
            layer=layer,
            head=head,
            lang=lang,
        ),
        t("Word order"),
        key=f"{prefix}_wo_figure",
        downloads=False,
    )
    if result.permutation is None:
        st.warning(
            t(
                "The second sentence is not the first one's pieces in another order, so there is no permutation "
                "to check: try swapping two words."
            )
        )
    else:
        st.markdown(
            t(
                "**Without positional encoding** the swapped run equals the original run permuted: largest "
                "difference {without} over the encoder's output and every attention weight (float32 rounding). "
                "**With it** the largest difference is {with_pe}: the same words at other places are other vectors.",
                without=f"{result.difference(False):.1e}",
                with_pe=f"{result.difference(True):.2f}",
            )
        )
    st.dataframe(
        [
            {
                t("encoder"): t("with positional encoding"),
                t("original"): result.with_pe[0].translation,
                t("swapped"): result.with_pe[1].translation,
            },
            {
                t("encoder"): t("without positional encoding"),
                t("original"): result.without_pe[0].translation,
                t("swapped"): result.without_pe[1].translation,
            },
        ],
        hide_index=True,
    )
    st.caption(
        t(
            "Greedy translations. Without the encoder's positions the decoder reads the same set of vectors for "
            "both sentences, and cross-attention sums over them whatever their order, so both get the same "
            "translation. Sentences: \u201c{first}\u201d, \u201c{second}\u201d.",
            first=md_escape(original),
            second=md_escape(swapped),
        )
    )
