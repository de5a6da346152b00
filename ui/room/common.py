"""What the phone page and the presenter's panel share: the store, a room's question and answers as text
(never as HTML: every field from the room is escaped), a refusal as a sentence, and how often both poll."""

from __future__ import annotations

from explorer.rooms.store import RoomStore
from explorer.rooms.tally import RoomError
from explorer.tour.exercises import CHOICE, Exercise
from ui.i18n import t
from ui.markdown import md_escape, shown_value
from ui.tour.exercises import _option_label as option_label

# Phones and the projector poll the database this often: a move or a reveal reaches every phone within it (the
# goal is 2 s), and 200 phones polling once a second are 200 small reads a second.
POLL_S = 1.0


def store() -> RoomStore:
    """The rooms of this server's database (explorer/rooms/schema.py: one engine per process)."""
    return RoomStore()


def question_text(exercise: Exercise) -> str:
    """The question as Markdown, in the reader's language, with every field from the room shown literally."""
    return t(exercise.question, **_fields(exercise))


def explanation_text(exercise: Exercise) -> str:
    return t(exercise.explanation, **_fields(exercise))


def _fields(exercise: Exercise) -> dict[str, object]:
    return {k: (md_escape(v) if isinstance(v, str) else v) for k, v in exercise.fields.items()}


def value_text(exercise: Exercise, value: str | float) -> str:
    """An answer as Markdown text: an option's label, or a number as the question writes it."""
    shown = option_label(str(value)) if exercise.kind == CHOICE else f"{float(value):g}"
    return shown_value(shown)


def slider_range(exercise: Exercise, mine: str | None) -> tuple[float, float, float, float]:
    """(low, high, start, step) of a number question's slider: it starts on this phone's answer, else on the
    step nearest the middle of the range."""
    step = float(exercise.step)
    start = float(mine) if mine is not None else round((exercise.low + exercise.high) / 2 / step) * step
    return float(exercise.low), float(exercise.high), start, step


def refusal(error: RoomError) -> str:
    """A refusal from the store as a sentence in the reader's language; quoted values shown literally."""
    return t(error.message, **{k: shown_value(v) for k, v in error.fields.items()})


__all__ = [
    "POLL_S",
    "explanation_text",
    "option_label",
    "question_text",
    "refusal",
    "slider_range",
    "store",
    "value_text",
]
