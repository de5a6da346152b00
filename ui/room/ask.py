"""A question the lecturer asks the class from Translate: in presenter mode, with a room open (opened on the
Tour page), "which source token does the head on screen look at most when the decoder produces this word?",
its answer computed from the model's encoder-decoder attention (explorer.tour.exercises.cross_attention_target,
the tour's stop-3 question for a chosen word). The question goes to every phone in the room; the class's
answers and the reveal are the room panel's (ui/room/panel.py), as on the tour.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from explorer.inference import Translation
from explorer.rooms.tally import RoomError
from explorer.text.pieces import shown_piece
from explorer.tour.exercises import cross_attention_target
from ui.i18n import t
from ui.presenter import presenter_on
from ui.room.common import refusal, store
from ui.room.panel import PANEL_STYLE, held_room, live_room

WORD_KEY, ASKED_KEY, REFUSAL_KEY = "room_ask_word", "room_asked", "room_ask_refusal"
# Translate's view pickers keep their values in the session under their URL keys (ui/translate/attention.py):
# read when the button is clicked, so the question is about the head on screen even though the pickers live
# in a fragment that reruns without this part of the page.
MODE, FAMILY, LAYER, HEAD = "mode", "family", "layer", "head"


def ask_the_class(translation: Translation) -> None:
    """Under Translate's views, in presenter mode: a target word and "Ask the class"; without an open room,
    the button says where to open one. Nothing outside presenter mode."""
    if not presenter_on():
        return
    held = held_room()
    with st.container(border=True, key="room_ask"):
        if held is None:
            st.button(
                t("To ask the class, open a room on the Tour page first"),
                key="room_ask_button",
                disabled=True,
                help=t(
                    "In presenter mode the Tour page's \u201cOpen a room for the class\u201d shows a join code; a "
                    "question asked here then goes to every phone in that room."
                ),
            )
            return
        words = translation.target_output_pieces
        rows = range(max(1, len(words) - 1))  # the last row produces </s>: not a word to ask about
        st.selectbox(
            t("Ask the class which source token the head on screen looks at most when the decoder produces"),
            rows,
            format_func=lambda row: shown_piece(words[row]),
            key=WORD_KEY,
        )
        st.button(t("Ask the class"), key="room_ask_button", type="primary", on_click=_ask, args=(held, translation))
        if st.session_state.get(REFUSAL_KEY):
            st.warning(st.session_state.pop(REFUSAL_KEY))
    if st.session_state.get(ASKED_KEY) == held[0]:
        st.html(PANEL_STYLE)
        with st.expander(t("The class's answers"), expanded=True):
            live_room(*held)


def _ask(held: tuple[str, str], translation: Translation) -> None:
    """The button's callback: the question for the head on screen, added to the room and shown on every phone."""
    if st.session_state.get(MODE, "head") != "head" or st.session_state.get(FAMILY, "cross") != "cross":
        st.session_state[REFUSAL_KEY] = t(
            "Show one head of encoder-decoder attention (View: One head) to ask about the source token it looks at."
        )
        return
    assert translation.attention is not None, "Translate translates with attention"
    layers, heads = translation.attention.cross.shape[:2]  # (layers, heads, tgt, src)
    layer = _picked(LAYER, layers, default=layers)  # Translate opens on the top layer, head 1
    head = _picked(HEAD, heads, default=1)
    row = int(st.session_state.get(WORD_KEY) or 0)
    exercise = cross_attention_target(translation, layer - 1, head - 1, row)
    exercise = dataclasses.replace(exercise, key=f"asked_cross_{layer}_{head}_{row}")
    try:
        store().ask(held[0], held[1], exercise)
    except RoomError as error:
        st.session_state[REFUSAL_KEY] = refusal(error)
        return
    st.session_state[ASKED_KEY] = held[0]


def _picked(key: str, count: int, *, default: int) -> int:
    """A 1-based layer or head from Translate's picker, `default` when the picker holds none within 1..count."""
    value = st.session_state.get(key)
    return int(value) if isinstance(value, int) and 1 <= value <= count else default
