"""The phone page (/join?room=CODE): a student joins a room without an account and sees only the room's
current question, answers it with a thumb, and follows the lecturer (a move, a reveal) by polling the
database every `POLL_S`, without touching the page.

The device's identity is a random id kept in the page's URL (?device=), so a reload keeps its one vote per
question; nothing else about the student is stored.
"""

from __future__ import annotations

import secrets

import streamlit as st

from explorer.i18n import LANGUAGES
from explorer.rooms.store import Room, normalize_code
from explorer.rooms.tally import RoomError
from explorer.tour.exercises import CHOICE, Exercise
from ui.i18n import NAMES, current_language, t
from ui.markdown import md_escape
from ui.room.common import (
    POLL_S,
    explanation_text,
    option_label,
    question_text,
    refusal,
    slider_range,
    store,
    value_text,
)

ROOM_PARAM, DEVICE_PARAM = "room", "device"
DEVICE_KEY, LANG_KEY, SENT_KEY = "room_device", "join_lang", "join_sent"

# A phone at 390×844: no sidebar, no page list, large text, every control a thumb wide and tall. Keyed on the
# page's own container, so it acts on this page alone.
JOIN_STYLE = """<style>
body:has(.st-key-join_page) :is([data-testid="stSidebar"], [data-testid="stExpandSidebarButton"],
  [data-testid="stHeader"]) { display: none; }
body:has(.st-key-join_page) [data-testid="stMainBlockContainer"] { padding: 1rem 1rem 4rem; max-width: 40rem; }
.st-key-join_page p, .st-key-join_page li, .st-key-join_page label { font-size: 1.2rem; line-height: 1.45; }
.st-key-join_page button { min-height: 3.5rem; font-size: 1.25rem; }
.st-key-join_page button p { font-size: 1.25rem; }
.st-key-join_page input { min-height: 3rem; font-size: 1.3rem; }
</style>"""


def device() -> str:
    """This phone's random id: from ?device= (a reload keeps it), else new."""
    if DEVICE_KEY not in st.session_state:
        given = str(st.query_params.get(DEVICE_PARAM, ""))
        valid = 8 <= len(given) <= 32 and given.replace("-", "").replace("_", "").isalnum()
        st.session_state[DEVICE_KEY] = given if valid else secrets.token_urlsafe(12)
    st.query_params[DEVICE_PARAM] = st.session_state[DEVICE_KEY]
    return str(st.session_state[DEVICE_KEY])


def _switch_language() -> None:
    st.session_state["lang"] = st.session_state[LANG_KEY]  # the frame's sidebar switch, read by t()


def _language_switch() -> None:
    st.session_state[LANG_KEY] = current_language()
    st.segmented_control(
        "Language",
        LANGUAGES,
        key=LANG_KEY,
        required=True,
        format_func=NAMES.__getitem__,
        on_change=_switch_language,
        label_visibility="collapsed",
    )


def _enter_code() -> None:
    st.query_params[ROOM_PARAM] = str(st.session_state.get("join_code", "")).strip()


def _code_box() -> None:
    with st.form("join_form", border=False):
        st.text_input(t("Room code"), key="join_code", placeholder="ABCD2345", max_chars=20)
        st.form_submit_button(t("Join"), key="join_submit", type="primary", width="stretch", on_click=_enter_code)


def join_page() -> None:
    st.html(JOIN_STYLE)
    with st.container(key="join_page"):
        _language_switch()
        typed = str(st.query_params.get(ROOM_PARAM, "")).strip()
        if not typed:
            st.markdown(f"#### {t('Join the class')}")
            _code_box()
            return
        try:
            room = store().join(normalize_code(typed), device())
        except RoomError as error:
            st.error(refusal(error))
            _code_box()
            return
        follow(room.code, device())


def _send(code: str, position: int, value: object) -> None:
    """An answer button's callback: the store's refusal, if any, is shown under the controls."""
    try:
        store().answer(code, st.session_state[DEVICE_KEY], position, value)
        st.session_state[SENT_KEY] = None
    except RoomError as error:
        st.session_state[SENT_KEY] = refusal(error)


def _send_number(code: str, position: int, key: str) -> None:
    _send(code, position, st.session_state.get(key))


@st.fragment(run_every=POLL_S)
def follow(code: str, device_id: str) -> None:
    """The room's current question, read again every POLL_S: a move or a reveal reaches the phone by itself."""
    try:
        room = store().room(code)
    except RoomError as error:
        st.error(refusal(error))
        return
    exercise = store().exercise(room.code, room.current)
    st.caption(
        t("Room {code} \u00b7 question {number} of {count}", code=room.code, number=room.current + 1, count=room.count)
    )
    with st.container(key="join_question"):
        st.markdown(question_text(exercise))
    mine = store().my_answer(room.code, device_id, room.current)
    if room.revealed:
        _revealed(room, exercise, mine)
        return
    _answer_controls(room, exercise, mine)
    if st.session_state.get(SENT_KEY):
        st.warning(st.session_state[SENT_KEY])
    elif mine is not None:
        st.success(
            t("Your answer: {answer}. You can change it until the lecturer reveals.", answer=value_text(exercise, mine))
        )
    else:
        st.info(t("Answer before the lecturer reveals the model's answer."))


def _answer_controls(room: Room, exercise: Exercise, mine: str | None) -> None:
    position = room.current
    if exercise.kind == CHOICE:
        with st.container(key="join_options"):
            for i, option in enumerate(exercise.options):
                st.button(
                    md_escape(option_label(option)),  # a button's label is Markdown
                    key=f"join_option_{position}_{i}",
                    type="primary" if option == mine else "secondary",
                    width="stretch",
                    on_click=_send,
                    args=(room.code, position, option),
                )
        return
    key = f"join_number_{position}"
    low, high, start, step = slider_range(exercise, mine)
    st.slider(t("Your answer"), low, high, start, step=step, key=key)
    st.button(
        t("Send"),
        key=f"join_send_{position}",
        type="primary",
        width="stretch",
        on_click=_send_number,
        args=(room.code, position, key),
    )


def _revealed(room: Room, exercise: Exercise, mine: str | None) -> None:
    answer = value_text(exercise, exercise.answer)
    progress = store().progress(room.code, room.current)
    share = round(100 * progress.tally.right_share)
    if mine is None:
        st.info(t("The model's answer: {answer}.", answer=answer))
    else:
        right = exercise.is_correct(float(mine) if exercise.kind != CHOICE else mine)
        verdict = t("Right") if right else t("Not quite")
        message = t(
            "{verdict}: you said {guess}, the model says {answer}.",
            verdict=verdict,
            guess=value_text(exercise, mine),
            answer=answer,
        )
        (st.success if right else st.warning)(message)
    st.markdown(t("{share}% of the class was right.", share=share))
    st.markdown(explanation_text(exercise))
