"""What a room does with one exercise's answers, without the database: check a submitted answer, and count
the class's answers into bars in the question's own units (each option of a choice; ranges of a number).

Pure functions of an `Exercise` (explorer/tour/exercises.py) and the stored answer texts, so the projector's
bars, the share that was right and the refusals are tested without a server.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.tour.exercises import CHOICE, Exercise

# At most this many bars for a number: enough to see a spread, few enough to read from the back of a hall.
NUMBER_BINS = 10


class RoomError(Exception):
    """A refusal the student or lecturer reads: `message` is an English msgid with {fields}, translated by
    the page (explorer.i18n)."""

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message.format(**fields) if fields else message)
        self.message = message
        self.fields = fields


def exercise_to_json(exercise: Exercise) -> str:
    return json.dumps(dataclasses.asdict(exercise), ensure_ascii=False, default=str)


def exercise_from_json(text: str) -> Exercise:
    data = json.loads(text)
    data["options"] = tuple(data.get("options", ()))
    return Exercise(**data)


def checked_answer(exercise: Exercise, raw: object) -> str:
    """`raw` as the text stored for `exercise`, or RoomError saying why it is refused: a choice must be one
    of the options, a number a finite number within the question's range."""
    if exercise.kind == CHOICE:
        if not isinstance(raw, str) or raw not in exercise.options:
            raise RoomError("That is not one of the question's options.")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise RoomError("The answer must be a number.")
    try:
        value = float(raw)
    except ValueError:
        raise RoomError("The answer must be a number.") from None
    if not math.isfinite(value) or not exercise.low <= value <= exercise.high:
        raise RoomError(
            "The answer must be between {low} and {high}.", low=f"{exercise.low:g}", high=f"{exercise.high:g}"
        )
    return repr(value)


def stored_value(exercise: Exercise, text: str) -> str | float:
    return text if exercise.kind == CHOICE else float(text)


@dataclass(frozen=True)
class Bar:
    label: str  # an option (as stored: the page shows it through its own labels), or a range "low–high"
    count: int
    right: bool  # holds the model's answer: drawn only after the reveal


@dataclass(frozen=True)
class Tally:
    answered: int
    bars: tuple[Bar, ...]
    right: int  # answers that count as right (Exercise.is_correct)

    @property
    def right_share(self) -> float:
        return self.right / self.answered if self.answered else 0.0


def _edges(exercise: Exercise) -> list[float]:
    """NUMBER_BINS equal ranges over the guess widget's range, each a whole number of its steps."""
    steps = max(1, round((exercise.high - exercise.low) / exercise.step))
    per_bin = max(1, math.ceil(steps / NUMBER_BINS))
    count = math.ceil(steps / per_bin)
    return [exercise.low + i * per_bin * exercise.step for i in range(count)] + [exercise.high]


def _number_text(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{decimals}f}"


def tally(exercise: Exercise, values: Sequence[str]) -> Tally:
    """The class's answers (stored texts) as bars: one per option, or one per range of a number."""
    guesses = [stored_value(exercise, v) for v in values]
    right = sum(exercise.is_correct(g) for g in guesses)
    if exercise.kind == CHOICE:
        bars = tuple(
            Bar(option, sum(g == option for g in guesses), option == exercise.answer) for option in exercise.options
        )
        return Tally(len(guesses), bars, right)
    edges = _edges(exercise)
    counts = [0] * (len(edges) - 1)
    for guess in guesses:
        index = next(i for i in range(len(counts)) if float(guess) < edges[i + 1] or i == len(counts) - 1)
        counts[index] += 1
    answer = float(exercise.answer)
    bars = tuple(
        Bar(
            f"{_number_text(edges[i], exercise.step)}\u2013{_number_text(edges[i + 1], exercise.step)}",
            counts[i],
            edges[i] <= answer < edges[i + 1] or (i == len(counts) - 1 and answer == edges[-1]),
        )
        for i in range(len(counts))
    )
    return Tally(len(guesses), bars, right)
