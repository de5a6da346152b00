"""Tour of the paper: ten stops from Figure 1 to Table 3 and beyond, each with the paper's text, its formula,
a live figure from the loaded model on one sentence, and exercises that ask before they reveal (issue 17)."""

from __future__ import annotations

import streamlit as st

from explorer.tour.exercises import score
from explorer.tour.links import full_page_link
from explorer.tour.stops import STOPS
from ui.attention_view import example_sentences
from ui.i18n import current_language, t
from ui.model_cache import require_model
from ui.tour_exercises import show_exercise
from ui.tour_state import SENTENCE_KEY, STOP_KEY, go_to, guesses, tour_exercises, tour_translation
from ui.tour_stops import STOP_VIEWS, TourContext

selection, checkpoint = require_model()
lang = current_language()
examples = example_sentences(checkpoint.metadata)
# An in-domain sentence whose attention reads well ("Two dogs play in the snow." for Multi30k).
default_sentence = examples[1 % len(examples)]
with st.sidebar:
    sentence = st.text_input(
        t("The tour's sentence"),
        default_sentence,
        key=SENTENCE_KEY,
        bind="query-params",
        help=t("Chosen once: every stop uses it."),
    )
sentence = sentence.strip() or default_sentence
translation = tour_translation(selection, sentence)
exercises = tour_exercises(selection, sentence)
committed = guesses(exercises)

# The stop's layout on a projector (issue 15): the paper's formulas at body-text size, with room above and below
# for fractions and tall brackets (a formula box that scrolls sideways also cuts what rises above its line).
# Where the text column is too narrow for them (the tour body under ~840 px: 1024 px beside the sidebar),
# the two columns stack, the figure first, so the figure keeps the first screen and every formula its width.
# The buttons to the neighbouring stops wrap their titles rather than cut them.
st.html(
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
    "white-space: normal; overflow: visible; text-overflow: clip; }</style>"
)

header, pager = st.columns((3, 2), vertical_alignment="center")
number = pager.pagination(len(STOPS), key=STOP_KEY, bind="query-params", max_visible_pages=None, width="stretch")
stop = STOPS[number - 1]
right, answered = score(exercises, committed)
header.markdown(f"##### {number}/{len(STOPS)} \u00b7 {t(stop.title)}")
st.caption(
    f"{t(stop.section)} \u00b7 {t('Sentence')}: \u201c{sentence}\u201d \u2192 \u201c{translation.output}\u201d"
    + (f" \u00b7 {t('Score {right}/{answered}', right=right, answered=answered)}" if answered else "")
)

with st.container(key="tour_body"):
    text_column, figure_column = st.columns((2, 3), gap="medium")
context = TourContext(selection, checkpoint, sentence, translation, lang)
with figure_column:
    layer, head = STOP_VIEWS[stop.key](context)
with text_column:
    st.markdown(t(stop.text))
    with st.container(key="tour_formulas"):
        for formula in stop.formulas:
            st.latex(formula)
    if stop.page:
        link = full_page_link(
            stop.page, sentence, model=st.session_state.get("model"), lang=lang, layer=layer, head=head
        )
        st.markdown(f"[{t('Open in the full page')} \u2197]({link})")
    for exercise in (e for e in exercises if e.stop == stop.number):
        show_exercise(exercise, committed)

previous, following = st.columns(2)
if number > 1:
    previous.button(
        f"\u2190 {t(STOPS[number - 2].title)}", key="tour_prev", on_click=go_to, args=(number - 1,), width="stretch"
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
