"""The lecturer's room panel, on the tour page in presenter mode: open a room on the tour's exercises for the
current checkpoint and sentence; the projector shows the join code, the link and its QR code, how many have
joined and answered, and the class's answers as bars (without the model's answer) while they arrive; Reveal
shows the answer on the projector and on every phone, with the share that was right and the explanation.

Only this browser holds the room's presenter token: in the tab's state, and in a cookie (path /, SameSite
Strict, for the room's lifetime) so that the panel comes back with its room after a server restart, when
Streamlit gives the reconnecting tab a fresh state.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from urllib.parse import urlsplit

import segno
import streamlit as st

from explorer.rooms.store import DEFAULT_HOURS, Progress, Room
from explorer.rooms.tally import RoomError
from explorer.tour.exercises import CHOICE, Exercise
from ui.i18n import t
from ui.presenter import presenter_on
from ui.room.common import POLL_S, explanation_text, option_label, question_text, refusal, store, value_text
from ui.room.figure import bars_figure

HELD_KEY, COOKIE = "room_held", "explorer_room"
CLASS_PORT_ENV = "EXPLORER_CLASS_PORT"  # set by main_script/class_server.py
JOIN_PAGE = "join"
QR_PX = 140  # read by a phone from the back rows of a lecture hall, small enough to leave the bars room
# The code at a size read from the back of a lecture hall, on one line in the panel's narrow first column.
PANEL_STYLE = (
    "<style>.st-key-room_code p { font-size: min(2.2rem, 3.2vw); font-weight: 700; letter-spacing: 0.08em; "
    "white-space: nowrap; } "
    ".st-key-room_cookie { display: none; }</style>"
)
# Set or clear the presenter cookie; the values are a room code and a URL-safe token (no quote, no semicolon).
COOKIE_JS = "<script>document.cookie = '{name}={value}; path=/; max-age={seconds}; SameSite=Strict';</script>"


def held_room() -> tuple[str, str] | None:
    """(code, token) of this browser's open room: the tab's, else the cookie's if its token still opens it."""
    if HELD_KEY not in st.session_state:
        code, _, token = saved_cookie().partition(".")
        st.session_state[HELD_KEY] = (code, token) if token and _opens(code, token) else None
    held = st.session_state[HELD_KEY]
    return None if held is None else (str(held[0]), str(held[1]))


def saved_cookie() -> str:
    """ "CODE.TOKEN" of the room this browser opened, as its cookie came with the page request; "" if none."""
    return str(st.context.cookies.get(COOKIE) or "")


def _opens(code: str, token: str) -> bool:
    try:
        store().room(code)
    except RoomError:
        return False
    return store().is_presenter(code, token)


def _cookie(value: str, seconds: int) -> None:
    with st.container(key="room_cookie"):  # hidden (height 0): the script runs, the panel keeps its layout
        st.html(COOKIE_JS.format(name=COOKIE, value=value, seconds=seconds), unsafe_allow_javascript=True)


def _open(checkpoint: str, sentence: str, exercises: Sequence[Exercise], lang: str) -> None:
    room, token = store().open_room(checkpoint, sentence, exercises, lang=lang)
    st.session_state[HELD_KEY] = (room.code, token)


def _forget() -> None:
    st.session_state[HELD_KEY] = None


def room_panel(checkpoint: str, sentence: str, exercises: Sequence[Exercise], lang: str) -> None:
    """In presenter mode: "Open a room", or the open room's panel. Nothing outside presenter mode."""
    if not presenter_on():
        return
    st.html(PANEL_STYLE)
    held = held_room()
    # Written at one place whichever branch follows: were the writer to move between reruns (after the button in
    # one, before the panel in the next), the browser could draw the stale "clear" beside the new "set" for a
    # moment and run it last, losing the cookie and so the room on the next restart.
    if held is None:
        _cookie("", 0)
    else:
        _cookie(f"{held[0]}.{held[1]}", int(DEFAULT_HOURS * 3600))
    with st.container(border=held is not None, key="room_panel"):
        if held is None:
            st.button(
                t("Open a room for the class"),
                key="room_open",
                on_click=_open,
                args=(checkpoint, sentence, list(exercises), lang),
                help=t(
                    "Students answer the tour's questions on their phones; the projector shows the class's answers."
                ),
            )
            return
        live_room(*held)


def join_link(code: str) -> str:
    """The phone page's address, as the lecturer's browser reaches this server: on the students' server's port
    when one was started beside this one (`python app.py --class-port PORT`), else on this server."""
    return phone_link(str(st.context.url or "http://localhost:8501/"), code, os.environ.get(CLASS_PORT_ENV))


def phone_link(page_url: str, code: str, class_port: str | None = None) -> str:
    """/join?room=CODE beside `page_url` (the presenter's page), on `class_port` if given."""
    parts = urlsplit(page_url)
    prefix = parts.path.rsplit("/", 1)[0]
    netloc = parts.netloc
    if class_port:
        host = f"[{parts.hostname}]" if parts.hostname and ":" in parts.hostname else parts.hostname
        netloc = f"{host}:{int(class_port)}"
    return f"{parts.scheme}://{netloc}{prefix}/{JOIN_PAGE}?room={code}"


@st.cache_data(max_entries=16)
def qr_png(link: str) -> bytes:
    """The link as a QR code (PNG), drawn here: nothing is fetched from the network."""
    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=10, border=2)
    return out.getvalue()


def _act(action: str, code: str, token: str, position: int = 0) -> None:
    """A panel button's callback: every change to the room goes through the store with the token."""
    rooms = store()
    try:
        if action == "move":
            rooms.move(code, token, position)
        elif action in ("reveal", "hide"):
            rooms.reveal(code, token, action == "reveal")
        elif action == "reset":
            rooms.reset(code, token)
        elif action == "close":
            rooms.close(code, token)
            _forget()
    except RoomError as error:
        st.session_state["room_refusal"] = refusal(error)


@st.fragment(run_every=POLL_S)
def live_room(code: str, token: str) -> None:
    """The room as it is now, read again every POLL_S while answers arrive."""
    if st.session_state.get(HELD_KEY) is None:  # closed from this panel: the whole page draws "Open a room" again
        st.rerun(scope="app")
    try:
        room = store().room(code)
    except RoomError as error:
        st.error(refusal(error))
        st.button(t("Open a new room"), key="room_forget", on_click=_forget)
        return
    exercise = store().exercise(code, room.current)
    progress = store().progress(room.code, room.current)
    # Three columns, so the whole room (code, question, bars, buttons) fits under the stop's title on the
    # projector's first screen (1280×720, 1024×768) with the stop's figure one scroll below.
    _buttons(room, token)  # first: after a reveal the explanation lengthens the panel, the buttons stay in view
    if st.session_state.get("room_refusal"):
        st.warning(st.session_state.pop("room_refusal"))
    join, question, bars = st.columns((1, 1.4, 2), gap="medium")
    with join:
        link = join_link(code)
        st.caption(t("Join on your phone"))
        with st.container(key="room_code"):
            st.markdown(code)
        st.image(qr_png(link), width=QR_PX)
        st.markdown(f"`{link}`")
    with question:
        _question(room, exercise, progress)
    with bars:
        _bars(room, exercise, progress)
        if room.revealed:
            st.success(
                t(
                    "The model's answer: {answer}. {share}% of the class was right.",
                    answer=value_text(exercise, exercise.answer),
                    share=round(100 * progress.tally.right_share),
                )
            )
            st.markdown(explanation_text(exercise))


def _question(room: Room, exercise: Exercise, progress: Progress) -> None:
    st.caption(t("Question {number} of {count}", number=room.current + 1, count=room.count))
    st.markdown(question_text(exercise))
    joined, answered = st.columns(2)
    joined.metric(t("Joined"), progress.joined)
    answered.metric(t("Answered"), progress.tally.answered)


def _bars(room: Room, exercise: Exercise, progress: Progress) -> None:
    if exercise.kind == CHOICE:
        labels = [option_label(bar.label) for bar in progress.tally.bars]
        x_title = t("Options")
    else:
        labels = [bar.label for bar in progress.tally.bars]
        x_title = t("Answer")
    figure = bars_figure(progress.tally, labels, revealed=room.revealed, x_title=x_title, y_title=t("Students"))
    st.plotly_chart(figure, width="stretch", key="room_bars", config={"displayModeBar": False})


def _buttons(room: Room, token: str) -> None:
    row = st.container(horizontal=True, gap="small", key="room_buttons")
    last = room.count - 1
    row.button(
        "\u2190",
        key="room_prev",
        on_click=_act,
        args=("move", room.code, token, room.current - 1),
        disabled=room.current == 0,
        help=t("Previous question"),
    )
    if room.revealed:
        row.button(t("Hide the answer"), key="room_hide", on_click=_act, args=("hide", room.code, token))
    else:
        row.button(t("Reveal"), key="room_reveal", type="primary", on_click=_act, args=("reveal", room.code, token))
    row.button(
        "\u2192",
        key="room_next",
        on_click=_act,
        args=("move", room.code, token, room.current + 1),
        disabled=room.current == last,
        help=t("Next question"),
    )
    row.button(t("Reset this question"), key="room_reset", on_click=_act, args=("reset", room.code, token))
    row.download_button(
        t("Answers (CSV)"),
        store().export_csv(room.code, token),
        file_name=f"room-{room.code}.csv",
        mime="text/csv",
        key="room_csv",
        on_click="ignore",
    )
    row.button(t("Close the room"), key="room_close", on_click=_act, args=("close", room.code, token))
