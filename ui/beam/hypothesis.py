"""Beam's hypotheses: the n-best list, the pick of one hypothesis (or the node clicked in the tree), and its
cross-attention by a teacher-forced pass over its tokens."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from explorer.analysis.beam import nbest_rows
from explorer.analysis.words import average_heads
from explorer.checkpoint import Checkpoint
from explorer.figures.attention import attention_heatmap
from explorer.inference import attention_for
from explorer.model.transformer import SentenceAttention
from explorer.text.pieces import shown_pieces
from explorer.tokenizer import Tokenizer
from ui.attention_controls import number_picker
from ui.beam.search import Searched, forget_tree_click
from ui.beam.tree import NBEST_COLUMNS, beam_table
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.markdown import md_escape
from ui.model_cache import cached
from ui.model_picker import Selection
from ui.urlstate import bound_choice, url_default

HYPOTHESIS_KEY = "beam_hyp"


def nbest_list(searched: Searched, tokenizer: Tokenizer) -> list[dict[str, Any]]:
    """The n-best list's rows, best first (explorer/analysis/beam.py)."""
    return nbest_rows(searched.beam.nbest, tokenizer, searched.choice.alpha, searched.choice.form)


def chosen_hypothesis(searched: Searched, rows: list[dict[str, Any]]) -> tuple[int, ...]:
    """The tokens of the hypothesis picked in the n-best list below (the tree, drawn first, marks its path);
    the link's ?beam_hyp= is read here, before its selectbox exists."""
    index = url_default(HYPOTHESIS_KEY, 0, int, allowed=range(len(rows)))
    return tuple(searched.beam.nbest[index].tokens)


def nbest_section(rows: list[dict[str, Any]]) -> None:
    st.header(t("The {n}-best list", n=len(rows)))
    beam_table(rows, key="beam_nbest", columns=NBEST_COLUMNS, number_columns=("log p", "lp(length)"), decimals=4)


def hypothesis_picker(rows: list[dict[str, Any]], tokenizer: Tokenizer, clicked: tuple[int, ...] | None) -> None:
    """The hypothesis to look at, kept in the URL by its rank; a note when a node clicked in the tree
    (`clicked`, its tokens) is shown instead."""
    st.header(t("Cross-attention of a hypothesis"))
    bound_choice(
        st.selectbox,
        t("Hypothesis"),
        list(range(len(rows))),
        HYPOTHESIS_KEY,
        0,
        cast=int,
        on_change=forget_tree_click,
        format_func=lambda i: t(
            "#{n}: {text} (score {score:.3f})",
            n=i + 1,
            text=rows[i]["translation"] or t("(empty)"),
            score=rows[i]["score"],
        ),
    )
    if clicked is not None:
        st.caption(
            t(
                "Showing the node picked in the tree: {node}. Choose a hypothesis above to go back to the n-best list.",
                node=md_escape(" ".join(shown_pieces(tokenizer.target_pieces(clicked))) or "<s>"),
            )
        )


def _attention(selection: Selection, source_ids: tuple[int, ...], tokens: tuple[int, ...]) -> SentenceAttention:
    """Cross-attention (and the rest) of one hypothesis, by a teacher-forced pass over its tokens; cached."""
    return cached(
        "beam_attention",
        selection,
        (source_ids, tokens),
        lambda ck: attention_for(ck.model, [list(source_ids)], [list(tokens)])[0],
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _attention_figure(
    search: tuple[Any, ...],
    tokens: tuple[int, ...],
    layer: int,
    head: str,
    lang: str,
    which: str,
    _weights: np.ndarray,
    _searched: Searched,
    _tokenizer: Tokenizer,
) -> go.Figure:
    """The cross-attention of hypothesis `tokens` of the search named `search` in decoder `layer` (from 1), one
    `head` (from 1) or their "mean", `_weights` (output, source); `which` names it in the title (in `lang`). One
    object shared by every visit that draws the same (the search's name and these stand for `_weights` and
    `_searched`): the copy `attention_heatmap` hands out is revalidated through plotly's object model on every
    rerun. Never changed after it is built."""
    return attention_heatmap(
        _weights,
        shown_pieces(_tokenizer.target_pieces(tokens)),
        shown_pieces(_searched.beam.source_pieces),
        title=t("Cross-attention · layer {layer} · {which}", layer=layer, which=which),
        zmax=None,
        x_title=t("source (key)"),
        y_title=t("hypothesis token produced (query)"),
        lang=lang,
    )


def attention_section(
    selection: Selection, checkpoint: Checkpoint, searched: Searched, tokens: tuple[int, ...]
) -> None:
    """The cross-attention of the hypothesis `tokens` in one decoder layer, one head or their mean."""
    config = checkpoint.config
    attention = _attention(selection, tuple(searched.beam.source_ids), tokens)
    heads = ["mean"] + [str(h) for h in range(1, config.n_heads + 1)]
    # Side by side where they fit, one under the other where not (columns would break the head row in two).
    with st.container(horizontal=True, gap="large"):
        # The last layer, as on Translate: the first layer's cross-attention is diffuse.
        layer = number_picker("Decoder layer", "beam_layer", config.n_decoder_layers, default=config.n_decoder_layers)
        head = bound_choice(
            st.segmented_control,
            t("Head"),
            heads,
            "beam_head",
            "mean",
            required=True,
            format_func=lambda h: t("mean of heads") if h == "mean" else h,
        )
    weights = average_heads(attention.cross)[layer - 1] if head == "mean" else attention.cross[layer - 1, int(head) - 1]
    which = t("mean over heads") if head == "mean" else t("head {head}", head=head)
    figure = _attention_figure(
        searched.key, tokens, layer, head, current_language(), which, weights, searched, checkpoint.tokenizer
    )
    show_figure(figure, f"Beam hypothesis cross-attention layer {layer} {which}", key="beam_attention")
    st.caption(
        t(
            "Each row is a token of the hypothesis, each column a source token; colours run up to the largest "
            "weight shown, so faint structure stays visible."
        )
    )
