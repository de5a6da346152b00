"""Tour of the paper: ten stops from Figure 1 to Table 3 and beyond, each with the paper's text, its formula,
a live figure from the loaded model on one sentence, and exercises that ask before they reveal."""

from __future__ import annotations

from ui.i18n import current_language
from ui.model_cache import require_model
from ui.room import room_panel
from ui.tour.context import TourContext
from ui.tour.sections import neighbours, sentence_section, stop_body, stop_header
from ui.tour.state import guesses, tour_exercises, tour_translation

selection, checkpoint = require_model()
sentence = sentence_section(checkpoint.metadata)
context = TourContext(selection, checkpoint, sentence, tour_translation(selection, sentence), current_language())
exercises = tour_exercises(selection, sentence, context.lang)
committed = guesses(exercises)

stop = stop_header(context, exercises, committed)
# Presenter mode: the class answers on phones. Under the stop's title, so the projector's first screen shows it.
room_panel(selection.name, sentence, exercises, context.lang)
stop_body(context, stop, exercises, committed)
neighbours(stop.number)
