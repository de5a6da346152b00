"""Bad input on the pages (the store's own refusals are in test_store.py): an answer the store refuses comes back
to the phone as a sentence, and a room's text that looks like HTML stays text on the phone and on the projector."""

from __future__ import annotations

import dataclasses

from explorer.rooms.store import RoomStore
from tests.apptest_helpers import chart, open_page
from tests.rooms.conftest import exercises
from tests.rooms.test_pages import JOIN, SENTENCE, TOUR, rooms  # noqa: F401 (the fixture)

HOSTILE = "<img src=x onerror=alert(1)>"


def _hostile_room(rooms: RoomStore):  # noqa: F811
    choice = exercises()[0]
    choice = dataclasses.replace(choice, fields={**choice.fields, "word": HOSTILE})
    return rooms.open_room("words-fixture", HOSTILE, [choice])


def test_an_answer_the_store_refuses_comes_back_as_a_sentence(rooms):  # noqa: F811
    room, token = rooms.open_room("words-fixture", SENTENCE, exercises())
    phone = open_page(JOIN, model="words-fixture", room=room.code)
    rooms.move(room.code, token, 1)  # the lecturer moves on before the phone's next poll
    phone.button(key="join_option_0_1").click().run()
    assert not phone.exception
    assert any("The lecturer has moved on" in str(w.value) for w in phone.warning), [w.value for w in phone.warning]
    assert rooms.progress(room.code, 0).tally.answered == 0 and rooms.progress(room.code, 1).tally.answered == 0


def test_a_rooms_text_is_never_html_on_the_phone_or_the_projector(rooms):  # noqa: F811
    room, token = _hostile_room(rooms)
    phone = open_page(JOIN, model="words-fixture", room=room.code)
    question = "\n".join(m.value for m in phone.markdown)
    assert HOSTILE not in question and "\\<img" in question  # escaped Markdown: shown, not parsed
    projector = open_page(
        TOUR,
        model="words-fixture",
        tour_sentence=SENTENCE,
        presenter="1",
        state={"room_held": (room.code, token)},
    )
    shown = "\n".join(m.value for m in projector.markdown)
    assert HOSTILE not in shown and "\\<img" in shown
    labels = chart(projector, "room_bars")["data"][0]["x"]
    assert "&lt;b&gt;play&lt;/b&gt;" in labels and "<b>play</b>" not in labels  # plotly's pseudo-HTML escaped
    assert not [h for h in projector.get("html") if "onerror" in str(h.proto)], "no room text in raw HTML"
