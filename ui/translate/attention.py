"""Translate's attention views: the view settings in the sidebar (one head, every head, the mean over heads,
the head view; pieces or words; the colour scale), and the views themselves beside the (family, layer, head)
pickers, in a fragment so changing a head reruns only this part, never the translation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer.analysis.heads import head_summary
from explorer.analysis.words import average_heads
from explorer.figures.attention import attention_heatmap, head_view
from explorer.inference import Translation
from ui.attention_controls import (
    choice_list,
    drawn_values,
    family_picker,
    number_picker,
    sink_note,
    units_picker,
    weighting_switch,
)
from ui.attention_view import AttentionView, attention_view, head_title
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import COLUMN_GAP_PX, FIRST_SCREEN_FIGURE_PX, figure_column_px, fit_height
from ui.linked_heads import show_linked_grid
from ui.model_picker import Selection
from ui.presenter import step_buttons, stepper
from ui.urlstate import bound_buttons, bound_toggle

MODES = {"head": "One head", "grid": "All layers and heads", "mean": "Mean over heads", "lines": "Head view"}
# A caption line and the gap under it at 1024 px: the decoding note took it above the figure, which now has it.
_NOTE_PX = 40
_FIGURE_SHARE = 3 / 4.35  # the figure column beside the pickers (`attention_section`)


@dataclass(frozen=True)
class ViewChoice:
    mode: str  # a key of MODES
    units: str  # one of UNITS
    stretch: bool  # colours up to the view's largest weight instead of 1
    marker: bool  # pieces as the model sees them, with SentencePiece's word-start marker "▁"
    weighting: str = "raw"  # a key of ui.attention_controls.WEIGHTINGS


def view_controls(side: Any) -> ViewChoice:
    """The view, the tokens and the colour scale, in `side`; each kept in the URL."""
    with side:
        mode = choice_list(t("View"), MODES, "mode", "head")
        weighting = weighting_switch()
        units = units_picker(
            "units",
            help=t(
                "Sub-word pieces as the model reads them, or whole words: a word's attention is summed over its "
                "pieces on the key side and averaged over them on the query side."
            ),
        )
        # Off by default: "▁Ein" on every label reads as noise in a class. On, it shows which pieces start a
        # word, which is what the subword units teach (Section 5.1).
        marker = (
            bound_toggle(
                st,
                t("Pieces as the model sees them"),
                "marker",
                False,
                disabled=units != "pieces",  # a word has no marker
                help=t(
                    "On: each piece as the tokenizer gives it to the model, with “▁” where a new word starts "
                    "(“▁Hund” “e” is the word “Hunde”). Off: the pieces without that mark."
                ),
            )
            and units == "pieces"
        )
        stretch = mode in ("head", "mean") and bound_toggle(
            st,
            t("Stretch the colours to this view's largest weight"),
            "stretch",
            False,
            help=t(
                "Off: 0 to 1, the same scale for every head. On: 0 to the largest weight shown, which brings out "
                "the structure of heads that spread their attention."
            ),
        )
    return ViewChoice(mode, str(units), stretch, marker, weighting)


@st.fragment
def attention_section(selection: Selection, translation: Translation, choice: ViewChoice) -> None:
    """The pickers (family, layer, head) in a narrow column beside the chosen view, raw or value-weighted as
    `choice.weighting` says; a fragment, so changing a head, a layer or the family reruns only this part, never
    the translation. Sink heads are named under the grid and under a head that is one."""
    # 1.35 : 3 leaves the pickers room for four head buttons on one row at 1024 px (at 1 : 3 the fourth
    # wrapped onto a row of its own); the heatmap is sized by its height and still fits its column.
    pickers, shown = st.columns((1.35, 3), gap="medium")  # shown: _FIGURE_SHARE of the width
    with pickers:
        family = family_picker("family", vertical=True)
    explained = drawn_values(selection, translation, choice.weighting)
    view = attention_view(
        translation, family, choice.units, current_language(), marker=choice.marker, explained=explained
    )
    if choice.mode == "grid":
        _grid(view, shown, sink_note(selection, translation, family))
        return
    with pickers:
        # The top layer first: there cross-attention aligns words most clearly (see the model card).
        layer = number_picker("Layer", "layer", view.n_layers, default=view.n_layers)
    zmax = None if choice.stretch else 1.0
    if choice.mode == "head":
        with pickers:
            head = number_picker("Head", "head", view.n_heads)
            step_buttons(stepper("head", view.n_heads))
        _one_head(view, shown, layer, head, zmax, sink_note(selection, translation, family, head=(layer - 1, head - 1)))
    elif choice.mode == "mean":
        _mean(view, shown, layer, zmax)
    else:
        _head_view(view, pickers, shown, layer)


def _heatmap(view: AttentionView, shown: Any, weights: Any, layer: int, head: int | None, zmax: float | None) -> None:
    """One heatmap (queries × keys) in the figure column, sized to the first screen."""
    lang = current_language()
    # The decoding note is drawn in the sidebar, not above the figure: its line goes to the figure.
    figure = attention_heatmap(
        weights,
        view.query_labels,
        view.key_labels,
        title=head_title(view.family, layer, head, lang) + (" · " + t("value-weighted") if view.value_weighted else ""),
        x_title=view.key_title,
        y_title=view.query_title,
        zmax=zmax,
        show_values=head is not None and len(view.key_labels) <= 12,
        lang=lang,
    )
    with shown:
        show_figure(
            fit_height(figure, FIRST_SCREEN_FIGURE_PX + _NOTE_PX, figure_column_px(_FIGURE_SHARE, COLUMN_GAP_PX)),
            head_title(view.family, layer, head),
            key="translate_head" if head is not None else "translate_mean",
        )


def _one_head(view: AttentionView, shown: Any, layer: int, head: int, zmax: float | None, sinks: str) -> None:
    _heatmap(view, shown, view.weights[layer - 1, head - 1], layer, head, zmax)
    # The summary of every head, as the grid's table: its caption names the layer and head.
    info = head_summary(view.weights, current_language())[(layer - 1) * view.n_heads + head - 1]
    st.markdown(f"**{info['caption']}**")
    st.caption(
        t(
            "Entropy {entropy:.2f} nats · mean distance {distance:.1f} tokens · mean peak weight {peak:.2f}. "
            "Rows are queries, columns are keys.",
            entropy=info["entropy"],
            distance=info["mean_distance"],
            peak=info["max_weight"],
        )
        + (" " + sinks if sinks else "")
    )


def _mean(view: AttentionView, shown: Any, layer: int, zmax: float | None) -> None:
    _heatmap(view, shown, average_heads(view.weights)[layer - 1], layer, None, zmax)
    st.caption(
        t(
            "The mean of the {heads} heads of layer {layer}; each row is still a distribution.",
            heads=view.n_heads,
            layer=layer,
        )
    )


def _grid(view: AttentionView, shown: Any, sinks: str) -> None:
    """Every head of every layer, linked on hover, and the table of what each head does."""
    with shown:
        # Linked heads: pointing at a query row in one head highlights it in every head.
        show_linked_grid(
            view.weights,
            view.query_labels,
            view.key_labels,
            key="translate_grid",
            title=t("{family}: all layers and heads", family=t(view.title))
            + (" · " + t("value-weighted") if view.value_weighted else ""),
            share=0.75,  # the figure column beside the pickers
        )
    st.caption(
        t(
            "Every head of every layer ({layers} × {heads}), all on the same colour scale 0–1. Hover a cell "
            "for the exact weight.",
            layers=view.n_layers,
            heads=view.n_heads,
        )
        + (" " + sinks if sinks else "")
    )
    with st.expander(t("What each head does"), expanded=True):
        st.dataframe(
            [
                {
                    t("Layer"): s["layer"],
                    t("Head"): s["head"],
                    t("Pattern"): s["pattern"],
                    t("Entropy (nats)"): round(s["entropy"], 2),
                    t("Caption"): s["caption"],
                }
                for s in head_summary(view.weights, current_language())
            ],
            hide_index=True,
            width="stretch",
        )


def _head_view(view: AttentionView, pickers: Any, shown: Any, layer: int) -> None:
    """The chosen heads of one layer as lines from each query to its keys."""
    all_heads = list(range(1, view.n_heads + 1))
    with pickers:
        heads = bound_buttons(
            st.pills,
            t("Heads"),
            all_heads,
            "heads",
            all_heads,
            selection_mode="multi",
            help=t("Toggle heads on and off."),
        )
    if not heads:
        shown.info(t("Switch on at least one head above."), icon=":material/toggle_on:")
        return
    lang = current_language()
    with shown:
        show_figure(
            fit_height(
                head_view(
                    view.weights[layer - 1],
                    view.query_labels,
                    view.key_labels,
                    heads=[h - 1 for h in sorted(heads)],
                    title=f"{t(view.title)} · {t('layer')} {layer}",
                    query_title=view.query_title,
                    key_title=view.key_title,
                    lang=lang,
                )
            ),
            f"{view.title} layer {layer} head view",
            key="translate_lines",
        )
    st.caption(
        t(
            "Lines join each query (left) to the keys it attends to (right); thicker and more opaque means "
            "more weight. Hover a token on the left for its strongest keys; click a head in the legend to "
            "hide it."
        )
    )
