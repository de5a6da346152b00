"""The paper's Figures 3–5 on the loaded model: the encoder heads that link "making" to "more difficult" and "its"
to "Law" on the paper's two sentences, found by a score (explorer/analysis/paper_figures.py), with the score said."""

from __future__ import annotations

import streamlit as st

from explorer.analysis.paper_figures import LINKS, FigureFinding, find_all
from explorer.checkpoint import Checkpoint
from explorer.figures.attention import attention_heatmap
from explorer.text.pieces import shown_pieces
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import section_header
from ui.markdown import md_escape
from ui.model_cache import cached
from ui.model_picker import Selection
from ui.urlstate import bound_choice

TOP_HEADS = 8


def _label(figure: str) -> str:
    return {
        "3": t("Figure 3: “making” → “more difficult”"),
        "4-5": t("Figures 4–5: “its” → “Law”"),
    }[figure]


def paper_figures_section(selection: Selection, checkpoint: Checkpoint) -> None:
    """Pick a figure; the heads ranked by their score, the grid of every head's score, and the best head's map."""
    section_header(
        t("The paper's Figures 3–5 on this model"),
        t(
            "The paper shows encoder self-attention in layer 5 of 6 following a long-distance dependency "
            "(Figure 3) and resolving an anaphor (Figures 4–5). Here every head of this model is scored on the "
            "paper's two sentences: the score is the attention the query word's pieces put on the target words' "
            "pieces (summed over the targets, averaged over the query's pieces). A head attending evenly to every "
            "piece would score the share of pieces the targets take."
        ),
    )
    figure = bound_choice(
        st.segmented_control,
        t("Figure"),
        [link.figure for link in LINKS],
        "paper_figure",
        LINKS[0].figure,
        required=True,
        format_func=_label,
    )
    link = next(link for link in LINKS if link.figure == (figure or LINKS[0].figure))
    st.caption(t("Sentence: {sentence}", sentence=md_escape(link.sentence)))
    found = cached("paper_figures", selection, "all", lambda ck: find_all(ck.model, ck.tokenizer))[link.figure]
    if isinstance(found, tuple):
        words = ", ".join(f"“{md_escape(word)}”" for word in found)
        st.info(t("This model's source pieces do not form the words {words}: it cannot show this figure.", words=words))
        return
    _findings(found, checkpoint)


def _findings(found: FigureFinding, checkpoint: Checkpoint) -> None:
    best = found.best
    st.markdown(
        t(
            "Strongest link: **layer {layer}, head {head}**, score {score:.2f} (even attention: {chance:.2f}); "
            "its query word attends most to “{word}”.",
            layer=best.layer + 1,
            head=best.head + 1,
            score=best.score,
            chance=found.chance,
            word=md_escape(best.strongest),
        )
    )
    rows = [
        {
            t("Layer"): h.layer + 1,
            t("Head"): h.head + 1,
            t("Score"): round(h.score, 3),
            t("Word attended to most"): h.strongest,
            t("A target word"): h.hits,
        }
        for h in found.ranked[:TOP_HEADS]
    ]
    st.dataframe(rows, hide_index=True)
    config = checkpoint.config
    lang = current_language()
    show_figure(
        attention_heatmap(
            found.scores,
            [t("layer {layer}", layer=i + 1) for i in range(config.n_encoder_layers)],
            [t("head {head}", head=i + 1) for i in range(config.n_heads)],
            title=t(
                "Score of every encoder head: “{query}” → “{targets}”",
                query=found.link.query,
                targets=" ".join(found.link.targets),
            ),
            zmax=None,
            x_title=t("head"),
            y_title=t("layer"),
            show_values=None,
            lang=lang,
        ),
        f"Paper figure {found.link.figure} head scores",
        key="paper_figure_scores",
    )
    pieces = shown_pieces(found.pieces)
    show_figure(
        attention_heatmap(
            found.encoder_self[best.layer, best.head],
            pieces,
            pieces,
            title=t("Encoder self-attention · layer {layer} · head {head}", layer=best.layer + 1, head=best.head + 1),
            zmax=None,
            lang=lang,
        ),
        f"Paper figure {found.link.figure} best head",
        key="paper_figure_best",
    )
