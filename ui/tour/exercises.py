"""One predict-then-reveal exercise on the page: a guess widget and a Check button; after the guess is
committed, the model's answer and the explanation."""

from __future__ import annotations

import streamlit as st

from explorer.text.pieces import shown_piece
from explorer.tour.exercises import CHOICE, Exercise
from ui.i18n import t
from ui.markdown import md_escape
from ui.tour.state import record_guess

CHOICE_LABELS = {"yes": "yes", "no": "no"}


def _option_label(option: str) -> str:
    if option in CHOICE_LABELS:
        return t(CHOICE_LABELS[option])
    return shown_piece(option)


def _answer_text(exercise: Exercise) -> str:
    if exercise.kind == CHOICE:
        return _option_label(str(exercise.answer))
    value = float(exercise.answer)
    return f"{value:g}"


def show_exercise(exercise: Exercise, guesses: dict[str, str | float]) -> None:
    fields = {k: (md_escape(v) if isinstance(v, str) else v) for k, v in exercise.fields.items()}
    with st.container(border=True, key=f"exercise_{exercise.key}"):
        st.markdown(f"**{t('Your guess')}** \u00b7 {t(exercise.question, **fields)}")
        if exercise.key in guesses:
            committed = guesses[exercise.key]
            shown = _option_label(str(committed)) if exercise.kind == CHOICE else f"{float(committed):g}"
            verdict = t("Right") if exercise.is_correct(committed) else t("Not quite")
            message = t(
                "{verdict}: you said {guess}, the model says {answer}.",
                verdict=verdict,
                guess=md_escape(shown),
                answer=md_escape(_answer_text(exercise)),
            )
            (st.success if exercise.is_correct(committed) else st.warning)(message, icon=":material/lightbulb:")
            st.markdown(t(exercise.explanation, **fields))
            st.button(t("Try again"), key=f"retry_{exercise.key}", on_click=record_guess, args=(exercise.key, None))
            return
        widget_key = f"guess_{exercise.key}"
        guess: str | float | None
        if exercise.kind == CHOICE:
            # Pills: a sentence's tokens wrap onto several rows, which joined segmented buttons cannot do.
            guess = st.pills(
                t("Your answer"),
                exercise.options,
                key=widget_key,
                format_func=_option_label,
                label_visibility="collapsed",
            )
        else:
            middle = round((exercise.low + exercise.high) / 2 / exercise.step) * exercise.step
            guess = st.slider(
                t("Your answer"),
                float(exercise.low),
                float(exercise.high),
                float(middle),
                step=float(exercise.step),
                key=widget_key,
                label_visibility="collapsed",
            )
        st.button(
            t("Check"),
            key=f"check_{exercise.key}",
            type="primary",
            disabled=guess is None,
            on_click=_commit,
            args=(exercise.key, widget_key),
        )


def _commit(key: str, widget_key: str) -> None:
    """Check's callback: the guess is the widget's value at the moment of the click."""
    record_guess(key, st.session_state.get(widget_key))
