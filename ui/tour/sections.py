"""The tour page's sections: the sentence in the sidebar, the projector layout, the stop's header, its text
and live figure side by side, and the buttons to the neighbouring stops. Each stop's view lives in
ui/tour/model_stops.py (stops 1-5, 10) or ui/tour/paper_stops.py (6-9)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from explorer.tour.exercises import Exercise, score
from explorer.tour.stops import STOPS, Stop
from ui.attention_view import example_sentences
from ui.i18n import t
from ui.layout import controls
from ui.tour import model_stops, paper_stops
from ui.tour.context import TourContext, View
from ui.tour.exercises import show_exercise
from ui.tour.links import STOP_PAGES, STOP_TABS, full_page_link
from ui.tour.state import SENTENCE_KEY, STOP_KEY, go_to

STOP_VIEWS: dict[str, View] = {
    "architecture": model_stops.architecture_view,
    "scaled_dot_product": model_stops.scaled_dot_product_view,
    "multi_head": model_stops.multi_head_view,
    "ffn_embeddings": model_stops.ffn_embeddings_view,
    "positional": model_stops.positional_view,
    "why_self_attention": paper_stops.why_self_attention_view,
    "training": paper_stops.training_view,
    "beam_search": paper_stops.beam_search_view,
    "variations": paper_stops.variations_view,
    "beyond": model_stops.beyond_view,
}

# The stop's layout on a projector: the paper's formulas at body-text size, with room above and below
# for fractions and tall brackets (a formula box that scrolls sideways also cuts what rises above its line).
# Where the text column is too narrow for them (the tour body under ~840 px: 1024 px beside the sidebar),
# the two columns stack, the figure first, so the figure keeps the first screen and every formula its width.
# The buttons to the neighbouring stops wrap their titles rather than cut them.
PROJECTOR_STYLE = (
    "<style>.st-key-tour_formulas .katex { font-size: 1em; } "
    ".st-key-tour_formulas .katex-display { overflow-x: auto; overflow-y: hidden; padding: 0.4em 0.2em; "
    "margin: 0.4em 0; } "
    ".st-key-tour_body { container-type: inline-size; } "
    "@container (max-width: 840px) { "
    ".st-key-tour_body > [data-testid='stLayoutWrapper'] > [data-testid='stHorizontalBlock'] { "
    "flex-direction: column-reverse; } "
    ".st-key-tour_body > [data-testid='stLayoutWrapper'] > [data-testid='stHorizontalBlock'] > "
    "[data-testid='stColumn'] { width: 100%; flex: 1 1 auto; } } "
    ":is(.st-key-tour_prev, .st-key-tour_next) :is(.stMarkdownEllipsis, p) { "
    "white-space: normal; overflow: visible; text-overflow: clip; } "
    ".st-key-tour_to_top { display: none; }</style>"
)

# Streamlit keeps the main area's scroll position across reruns, so a new stop would open where the reader
# left the previous one. The script's text names the stop: it is new, and the browser runs it, exactly when
# the stop changes (Next, Previous, a page number, the presenter's keys), not when a widget of the stop does.
# A link (?stop=) opens a fresh page, which starts at the top anyway.
TO_TOP_SCRIPT = (
    "<script>/* stop {number} */ "
    "document.querySelectorAll('[data-testid=\"stMain\"]').forEach(main => main.scrollTo(0, 0));</script>"
)


def sentence_section(metadata: Mapping[str, Any]) -> str:
    """The tour's one sentence, among the page's controls (?tour_sentence=); an in-domain example when left
    empty."""
    examples = example_sentences(metadata)
    # An in-domain sentence whose attention reads well ("Two dogs play in the snow." for Multi30k).
    default = examples[1 % len(examples)]
    with controls():
        sentence = st.text_input(
            t("The tour's sentence"),
            default,
            key=SENTENCE_KEY,
            bind="query-params",
            help=t("Chosen once: every stop uses it."),
        )
    return sentence.strip() or default


def stop_header(context: TourContext, exercises: list[Exercise], committed: dict[str, str | float]) -> Stop:
    """The projector style, the stop picker (?stop=) beside the stop's title, and a caption with the paper's
    section, the sentence, its translation and the score so far. Returns the stop shown."""
    st.html(PROJECTOR_STYLE)
    header, pager = st.columns((3, 2), vertical_alignment="center")
    number = pager.pagination(len(STOPS), key=STOP_KEY, bind="query-params", max_visible_pages=None, width="stretch")
    with st.container(key="tour_to_top"):  # not displayed: the script runs, the page keeps its layout
        st.html(TO_TOP_SCRIPT.format(number=number), unsafe_allow_javascript=True)
    stop = STOPS[number - 1]
    right, answered = score(exercises, committed)
    header.markdown(f"##### {number}/{len(STOPS)} \u00b7 {t(stop.title)}")
    st.caption(
        f"{t(stop.section)} \u00b7 {t('Sentence')}: \u201c{context.sentence}\u201d \u2192 "
        f"\u201c{context.translation.output}\u201d"
        + (f" \u00b7 {t('Score {right}/{answered}', right=right, answered=answered)}" if answered else "")
    )
    return stop


def stop_body(context: TourContext, stop: Stop, exercises: list[Exercise], committed: dict[str, str | float]) -> None:
    """The paper's text, formulas, a link to the full page and the stop's exercises beside its live figure."""
    with st.container(key="tour_body"):
        text_column, figure_column = st.columns((2, 3), gap="medium")
    with figure_column:
        layer, head = STOP_VIEWS[stop.key](context)
    with text_column:
        st.markdown(t(stop.text))
        with st.container(key="tour_formulas"):
            for formula in stop.formulas:
                st.latex(formula)
        link = full_page_link(
            STOP_PAGES[stop.key],
            context.sentence,
            model=st.session_state.get("model"),
            lang=context.lang,
            layer=layer,
            head=head,
            tab=STOP_TABS.get(stop.key),
        )
        st.markdown(f"[{t('Open in the full page')} \u2197]({link})")
        for exercise in (e for e in exercises if e.stop == stop.number):
            show_exercise(exercise, committed)


def neighbours(number: int) -> None:
    """Buttons to the previous and the next stop, titled with their names."""
    previous, following = st.columns(2)
    if number > 1:
        previous.button(
            f"\u2190 {t(STOPS[number - 2].title)}",
            key="tour_prev",
            on_click=go_to,
            args=(number - 1,),
            width="stretch",
        )
    if number < len(STOPS):
        following.button(
            f"{t(STOPS[number].title)} \u2192",
            key="tour_next",
            on_click=go_to,
            args=(number + 1,),
            type="primary",
            width="stretch",
        )
