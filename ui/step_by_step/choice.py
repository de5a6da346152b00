"""What the Attention step by step page follows: the sentence, its greedy translation, an attention module
(family and layer), a head and one query position, all kept in the URL; and every intermediate of that
module for that translation, cached per model and view."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from explorer.analysis.step_by_step import HeadSteps, InspectedAttention, head_steps, inspect_translation
from explorer.checkpoint import Checkpoint
from explorer.inference import Translation
from explorer.paper import FAMILY_TITLES
from explorer.text.pieces import shown_pieces
from ui.attention_controls import (
    drawn_values,
    family_picker,
    number_picker,
    sentence_input,
    show_translation,
    weighting_switch,
)
from ui.i18n import t
from ui.layout import controls, page_header
from ui.markdown import md_escape
from ui.model_cache import cached, translate_for
from ui.model_picker import Selection
from ui.urlstate import bound_choice

QUERY_HELP = {
    "encoder_self": "Queries of encoder self-attention are the source tokens.",
    "decoder_self": "Queries of decoder self-attention are the tokens the decoder reads (<s> y1 …).",
    "cross": "Queries of cross-attention are the decoder positions, named by the token each produces.",
}
SOURCES = {
    "encoder_self": "the encoder's own positions",
    "decoder_self": "the decoder's earlier positions (causal mask)",
    "cross": "the encoder output (keys and values), queried from the decoder",
}


@dataclass(frozen=True)
class Followed:
    """One query of one head followed through Eq. 1; layer and head are 1-based, as the page shows them."""

    translation: Translation
    family: str
    layer: int
    head: int
    query: int  # 0-based position of the query
    view: InspectedAttention
    steps: HeadSteps
    d_model: int
    # The head's value-weighted attention (q, k) when the page's switch says so (ui.attention_controls), else None.
    value_weighted: np.ndarray | None = None

    @property
    def where(self) -> str:
        """'Cross-attention · layer 2 · head 1', in the page's language."""
        return t(
            "{family} · layer {layer} · head {head}",
            family=t(FAMILY_TITLES[self.family]),
            layer=self.layer,
            head=self.head,
        )


def inspected(
    selection: Selection, sentence: str, translation: Translation, family: str, layer: int
) -> InspectedAttention:
    """Every intermediate of one attention module for one translation (cached per model and view)."""
    return cached(
        "inspected",
        selection,
        (sentence, family, layer),
        lambda ck: inspect_translation(ck.model, translation, family, layer),
    )


def intro() -> None:
    page_header(
        t("Attention step by step"),
        t(
            "Scaled dot-product attention (Eq. 1) with the loaded model's real numbers: pick a sentence, an "
            "attention module, a head and one query token, and follow that query from its projection to the "
            "module's output."
        ),
        formula=(
            r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V \qquad "
            r"\mathrm{MultiHead} = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\,W^O"
        ),
    )


def follow_section(selection: Selection, checkpoint: Checkpoint) -> Followed | None:
    """The sentence and its translation, then module, layer, head and query in the page's controls, and a line
    saying what is followed. None (with a hint) while the sentence box is empty."""
    config = checkpoint.config
    side = controls()
    with side:
        sentence = sentence_input("sbs_sentence", checkpoint.metadata)
    if not sentence:
        st.info(t("Type a sentence to look inside the attention."))
        return None
    translation = translate_for(selection, [sentence], beam_size=1, with_attention=True)[0]
    show_translation(
        translation,
        config.max_len,
        how=t("greedy search; this output is fed back as the decoder input (teacher forcing)"),
    )
    with side:
        family = family_picker("sbs_family", vertical=True)
        n_layers = config.n_encoder_layers if family == "encoder_self" else config.n_decoder_layers
        layer = number_picker("Layer", "sbs_layer", n_layers)
        head = number_picker("Head", "sbs_head", config.n_heads)
        weighting = weighting_switch()
    view = inspected(selection, sentence, translation, family, layer - 1)
    # The tokens as a reader sees them ("Hund", not "▁Hund"): every figure, table and sentence below takes its
    # labels from here; the numbers are the cached ones, unchanged.
    view = replace(view, query_pieces=shown_pieces(view.query_pieces), key_pieces=shown_pieces(view.key_pieces))
    queries = view.query_pieces
    query: int = bound_choice(
        side.pills,
        t("Query token"),
        range(len(queries)),
        "sbs_query",
        min(1, len(queries) - 1),
        cast=int,
        required=True,
        format_func=lambda i: f"{i}: {queries[i]}",  # unique labels: pills match by label
        help=t("The position whose attention row is followed through every stage.") + " " + t(QUERY_HELP[family]),
    )
    explained = drawn_values(selection, translation, weighting)
    shares = None if explained is None else explained.weighted(family)[layer - 1, head - 1]
    followed = Followed(
        translation, family, layer, head, query, view, head_steps(view, head - 1, query), config.d_model, shares
    )
    steps = followed.steps
    st.markdown(
        t(
            "**{where}** · query **{token}** (position {query}) attends over {sources}; $d_k$ = {d_k}, "
            "$d_v$ = {d_v}, $h$ = {h}.",
            where=followed.where,
            token=md_escape(steps.query_piece),
            query=query,
            sources=t(SOURCES[family]),
            d_k=steps.d_k,
            d_v=steps.values.shape[1],
            h=view.n_heads,
        )
    )
    return followed
