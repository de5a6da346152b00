"""A question the lecturer asks from Translate (ui/room/ask.py): it reaches the open room with the answer the
model's attention gives, a phone answers it through the join page, and without a room the button says where to
open one."""

from __future__ import annotations

import numpy as np

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from explorer.rooms.store import RoomStore
from tests.apptest_helpers import open_page
from tests.rooms.conftest import exercises
from tests.rooms.test_pages import JOIN, SENTENCE, rooms  # noqa: F401 (the fixture)

TRANSLATE = "pages/translate.py"


def test_without_a_room_the_button_says_where_to_open_one(rooms):  # noqa: F811
    at = open_page(TRANSLATE, model="words-fixture", sentence=SENTENCE, presenter="1")
    button = at.button(key="room_ask_button")
    assert button.disabled and "Tour page" in button.label
    plain = open_page(TRANSLATE, model="words-fixture", sentence=SENTENCE)
    assert not [b for b in plain.button if b.key == "room_ask_button"], "only in presenter mode"


def test_the_head_on_screen_is_asked_to_the_room_and_a_phone_answers_it(rooms: RoomStore, checkpoint_root):  # noqa: F811
    room, token = rooms.open_room("words-fixture", SENTENCE, exercises())
    at = open_page(
        TRANSLATE,
        model="words-fixture",
        sentence=SENTENCE,
        presenter="1",
        state={"room_held": (room.code, token)},
    )
    at.segmented_control(key="head").set_value(2).run()
    at.selectbox(key="room_ask_word").set_value(1).run()
    at.button(key="room_ask_button").click().run()
    assert not at.exception, [e.message for e in at.exception]

    now = rooms.room(room.code)
    assert (now.count, now.current, now.revealed) == (3, 2, False)  # appended, and every phone moved to it
    asked = rooms.exercise(room.code, 2)
    checkpoint = load_checkpoint(checkpoint_root / "words-fixture")
    (translation,) = translate(checkpoint.model, checkpoint.tokenizer, [SENTENCE], with_attention=True)
    cross = translation.attention.cross  # (layers, heads, tgt, src)
    layer = cross.shape[0]  # Translate opens on the top layer
    expected = translation.source_pieces[int(np.argmax(cross[layer - 1, 1, 1]))]
    assert asked.answer == expected and asked.fields["head"] == 2 and asked.fields["layer"] == layer
    assert set(asked.options) == set(translation.source_pieces)
    assert [m for m in at.metric if m.label == "Answered"], "the class's answers below the question"

    phone = open_page(JOIN, model="words-fixture", room=room.code)
    index = asked.options.index(expected)
    phone.button(key=f"join_option_2_{index}").click().run()
    assert not phone.exception
    assert rooms.my_answer(room.code, phone.session_state["room_device"], 2) == expected
    rooms.reveal(room.code, token)
    phone.run()
    assert any("Right: you said" in str(s.value) for s in phone.success)
