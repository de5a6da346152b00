"""The phone page (/join) and the presenter's room panel through the app's frame (AppTest), in English and
Korean: joining by link or code, refusals in a sentence, answering, following a move and a reveal, and the
panel that only the presenter's tab can drive."""

from __future__ import annotations

import pytest

from explorer.rooms import schema
from explorer.rooms.store import RoomStore
from tests.apptest_helpers import open_page, plain
from tests.rooms.conftest import exercises

JOIN, TOUR = "pages/join.py", "pages/tour.py"
SENTENCE = "a small child sees the red dog ."


@pytest.fixture
def rooms(tmp_path, monkeypatch, checkpoint_root) -> RoomStore:
    """The app's store on a fresh SQLite file (EXPLORER_DATABASE_URL), and the same store for the test."""
    url = f"sqlite:///{tmp_path / 'rooms.sqlite'}"
    monkeypatch.setenv(schema.DATABASE_ENV, url)
    return RoomStore(schema.engine_for(url))


def _texts(at) -> str:
    alerts = [str(e.value) for kind in ("success", "warning", "info", "error") for e in getattr(at, kind)]
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + alerts)


def _alerts(at, kind: str) -> list[str]:
    return [str(e.value) for e in getattr(at, kind)]


@pytest.mark.parametrize("lang, label", [("en", "Room code"), ("ko", "방 코드")])
def test_without_a_code_the_phone_page_asks_for_one(rooms, lang, label):
    at = open_page(JOIN, model="words-fixture", lang=lang)
    assert at.text_input(key="join_code").label == label
    room, _ = rooms.open_room("words-fixture", SENTENCE, exercises())
    at.text_input(key="join_code").input(f" {room.code[:4]}-{room.code[4:].lower()} ")
    at.button(key="join_submit").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert rooms.progress(room.code, 0).joined == 1 and "Hunde" in _texts(at)


@pytest.mark.parametrize(
    "lang, code, message",
    [
        ("en", "ABC", "is not a room code"),
        ("en", "ZZZZZZZZ", "There is no room ZZZZZZZZ"),
        ("ko", "ZZZZZZZZ", "ZZZZZZZZ 방이 없습니다"),
    ],
)
def test_a_bad_code_is_refused_in_a_sentence(rooms, lang, code, message):
    at = open_page(JOIN, model="words-fixture", lang=lang, room=code)
    errors = _alerts(at, "error")
    assert len(errors) == 1 and message in errors[0], errors
    assert at.text_input(key="join_code")  # the box to type another code


def test_an_expired_room_says_so(rooms):
    room, _ = rooms.open_room("words-fixture", SENTENCE, exercises(), hours=-1)
    at = open_page(JOIN, model="words-fixture", room=room.code)
    assert "has expired" in _alerts(at, "error")[0]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_phone_answers_and_follows_a_move_and_a_reveal(rooms, lang):
    room, token = rooms.open_room("words-fixture", SENTENCE, exercises())
    at = open_page(JOIN, model="words-fixture", lang=lang, room=room.code.lower())
    question = "\n".join(m.value for m in at.markdown)
    assert ("which source token" in question) == (lang == "en") and ("Hunde" in question)
    # The room's text is escaped: an option that looks like HTML is a label, never markup.
    labels = [b.label for b in at.button if (b.key or "").startswith("join_option_0_")]
    assert [plain(label) for label in labels] == ["Two", "dogs", "<b>play</b>"] and "\\<b\\>" in labels[2]
    at.button(key="join_option_0_1").click().run()
    assert not at.exception
    assert rooms.progress(room.code, 0).tally.answered == 1
    rooms.reveal(room.code, token)
    at.run()  # the fragment's next poll
    shown = _texts(at)
    assert ("Right: you said dogs" if lang == "en" else "맞") in shown and "100%" in shown
    assert not [b for b in at.button if (b.key or "").startswith("join_option_")], "no answering after the reveal"
    rooms.move(room.code, token, 1)
    at.run()
    assert at.slider(key="join_number_1").max == 100
    at.slider(key="join_number_1").set_value(70).run()
    at.button(key="join_send_1").click().run()
    assert rooms.my_answer(room.code, at.session_state["room_device"], 1) == "70.0"
    other = "ko" if lang == "en" else "en"
    at.segmented_control(key="join_lang").set_value(other).run()  # the phone's own language switch
    assert ("\ubc29 " in at.caption[0].value) == (other == "ko"), at.caption[0].value


def test_the_presenter_opens_a_room_watches_answers_and_reveals_in_both_languages(rooms):
    at = open_page(TOUR, model="words-fixture", tour_sentence=SENTENCE, presenter="1", stop="4")
    at.button(key="room_open").click().run()
    assert not at.exception, [e.message for e in at.exception]
    code, token = at.session_state["room_held"]
    assert at.get("image"), "the QR code"
    assert any(f"/join?room={code}" in m.value for m in at.markdown)
    room = rooms.room(code)
    assert room.count == 9 and room.sentence == SENTENCE  # the tour's exercises, stops 2-9
    first = rooms.exercise(code, 0)
    rooms.answer(code, "phone-1", 0, first.low if first.kind == "number" else first.options[0])
    at.run()  # the panel's next poll
    assert [m.value for m in at.metric] == ["1", "1"]  # joined, answered
    assert not [m for m in at.success if "model's answer" in m.value], "no answer before the reveal"
    at.button(key="room_reveal").click().run()
    assert rooms.room(code).revealed and [m for m in at.success if "The model's answer" in m.value]
    at.button(key="room_next").click().run()
    assert rooms.room(code).current == 1 and not rooms.room(code).revealed
    at.sidebar.segmented_control(key="lang").set_value("ko").run()
    assert at.button(key="room_reveal").label == "정답 공개" and at.metric[0].label == "참여"
    at.button(key="room_close").click().run()
    assert at.session_state["room_held"] is None and at.button(key="room_open")
    at.button(key="present_exit").click().run()
    assert not [b for b in at.button if b.key == "room_open"], "only in presenter mode"


@pytest.mark.parametrize("cookie_holds_the_token", [True, False])
def test_after_a_restart_the_presenters_browser_gets_its_room_back(rooms, monkeypatch, cookie_holds_the_token):
    """A restarted server gives the reconnecting tab a fresh state: the room comes back from the browser's
    cookie, and only with the right token."""
    import ui.room.panel

    room, token = rooms.open_room("words-fixture", SENTENCE, exercises())
    rooms.answer(room.code, "phone-1", 0, "dogs")
    restarted = RoomStore(schema.make_engine(str(rooms.engine.url)))  # the new server's engine on the same file
    monkeypatch.setattr(ui.room.panel, "store", lambda: restarted)
    cookie = f"{room.code}.{token if cookie_holds_the_token else 'someone-else'}"
    monkeypatch.setattr(ui.room.panel, "saved_cookie", lambda: cookie)
    at = open_page(TOUR, model="words-fixture", tour_sentence=SENTENCE, presenter="1", stop="4")
    if cookie_holds_the_token:
        assert at.session_state["room_held"] == (room.code, token)
        assert [m.value for m in at.metric] == ["1", "1"]  # the answer given before the restart
    else:
        assert at.session_state["room_held"] is None and at.button(key="room_open")
