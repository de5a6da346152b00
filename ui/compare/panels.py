"""Compare's settings (what to compare, the colour scale, pieces or words, linked hover) and its panels: one
head of one translation each, drawn side by side on one colour scale."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer.analysis.heads import head_summary
from explorer.explain.value_weighted import ValueWeighted
from explorer.figures.compare import Panel, compare_heads
from explorer.inference import Translation
from explorer.paper import FAMILY_SHORT
from ui.attention_controls import choice_list, units_picker, weighting_switch
from ui.attention_view import attention_view
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import fit_height
from ui.linked_heads import show_linked_heads
from ui.presenter import stepper
from ui.urlstate import bound_toggle

COMPARE = {
    "heads": "Heads on one sentence",
    "checkpoints": "One head, two checkpoints",
    "sentences": "One head, two sentences",
}
SCALES = {"fixed": "0 to 1", "shared": "0 to the largest weight shown"}


@dataclass(frozen=True)
class CompareChoice:
    what: str  # a key of COMPARE
    scale: str  # a key of SCALES
    units: str  # one of UNITS
    linked: bool  # the Altair charts linked on hover, else the plotly figure
    weighting: str = "raw"  # a key of ui.attention_controls.WEIGHTINGS


def compare_controls(side: Any) -> CompareChoice:
    """The page's settings in `side`, each kept in the URL."""
    what = choice_list(t("Compare"), COMPARE, "c_compare", "heads", where=side)
    scale = choice_list(
        t("Colour scale"),
        SCALES,
        "c_scale",
        "fixed",
        help=t("Either way every panel uses the same scale, so equal colours mean equal weights."),
        where=side,
    )
    units = units_picker(
        "c_units",
        help=t("Sub-word pieces, or whole words (summed over a word's pieces as keys, averaged as queries)."),
        where=side,
    )
    linked = bound_toggle(
        side,
        t("Link the heads on hover"),
        "c_linked",
        True,
        help=t(
            "On: pointing at a query's row in one head highlights the same query in every head (in the browser, "
            "no rerun). Off: the plotly figure, with PNG and SVG downloads."
        ),
    )
    weighting = weighting_switch(where=side)
    return CompareChoice(what, scale, str(units), linked, weighting)


def panel(
    translation: Translation,
    family: str,
    layer: int,
    head: int,
    units: str,
    prefix: str = "",
    *,
    explained: ValueWeighted | None = None,
) -> tuple[Panel, str]:
    """One head (1-based layer and head) as a figure panel, plus the caption that says what it does; value-weighted
    when `explained` (ui.attention_controls.drawn_values) is given."""
    view = attention_view(translation, family, units, explained=explained)
    info = head_summary(view.weights[layer - 1 : layer, head - 1 : head], current_language())[0]
    title = f"{prefix}{t(FAMILY_SHORT[family])} · {t('layer')} {layer} · {t('head')} {head}"
    if view.value_weighted:
        title += " · " + t("value-weighted")
    return (
        Panel(
            view.weights[layer - 1, head - 1],
            view.query_labels,
            view.key_labels,
            title,
            view.query_title,
            view.key_title,
        ),
        f"**{title}** {info['behaviour']}",
    )


def show_panels(panels: Sequence[tuple[Panel, str]], choice: CompareChoice, name: str) -> None:
    """The panels side by side on one colour scale (linked charts or one plotly figure named `name` for its
    downloads), each one's caption under them."""
    zmax = 1.0 if choice.scale == "fixed" else None
    if choice.linked:
        show_linked_heads([p for p, _ in panels], key="compare_linked", zmax=zmax)
    else:
        figure = compare_heads([p for p, _ in panels], zmax=zmax, lang=current_language())
        show_figure(fit_height(figure, width=900), name, key="compare_figure")
    for _, caption in panels:
        st.markdown(caption)


def step_all_heads(count: int, n_heads: int) -> Callable[[int], None]:
    """Presenter mode: the remote moves every panel to its next (or previous) head."""
    steps = [stepper(f"c_h{i}", n_heads) for i in range(count)]

    def step(direction: int) -> None:
        for one in steps:
            one(direction)

    return step


def layers_of(family: str, n_encoder: int, n_decoder: int) -> int:
    """How many layers `family` has: the encoder's for its self-attention, the decoder's for the other two."""
    return n_encoder if family == "encoder_self" else n_decoder
