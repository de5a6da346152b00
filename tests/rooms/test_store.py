"""The rooms' storage (explorer/rooms/store.py) on SQLite and on a real PostgreSQL server: codes, expiry,
one vote per device, refusals, flooding, the CSV export and a restart (a new engine on the same database)."""

from __future__ import annotations

import csv
import io
import math

import pytest

from explorer.rooms import schema
from explorer.rooms.store import ALPHABET, CODE_LENGTH, RoomStore, new_code, normalize_code
from explorer.rooms.tally import RoomError, tally
from tests.rooms.conftest import exercises

NOW = 1_800_000_000.0


def _open(store: RoomStore, **kwargs):
    return store.open_room("multi30k-en-de", "Two dogs play in the snow.", exercises(), now=NOW, **kwargs)


def test_codes_are_random_short_and_carry_at_least_30_bits():
    codes = {new_code() for _ in range(2000)}
    assert len(codes) == 2000
    assert all(len(c) == CODE_LENGTH and set(c) <= set(ALPHABET) for c in codes)
    assert CODE_LENGTH * math.log2(len(ALPHABET)) >= 30
    assert not set(ALPHABET) & set("01OIL")  # nothing to mistake on a projector


@pytest.mark.parametrize("typed", ["ab", "ABCDEFG0", "ABCDEFGHJ", "", "<script>"])
def test_a_malformed_code_is_refused_in_a_sentence(typed):
    with pytest.raises(RoomError, match="is not a room code"):
        normalize_code(typed)


def test_a_typed_code_may_have_spaces_dashes_and_lower_case():
    assert normalize_code(" abcd-efgh ") == "ABCDEFGH"


def test_opening_joining_and_an_unknown_expired_or_closed_room(store):
    room, token = _open(store)
    assert room.count == 2 and room.current == 0 and not room.revealed
    assert room.expires_at == NOW + 4 * 3600  # four hours by default
    assert store.join(room.code.lower(), "phone-1", now=NOW + 1).code == room.code
    with pytest.raises(RoomError, match="There is no room"):
        store.room("ZZZZZZZZ" if room.code != "ZZZZZZZZ" else "YYYYYYYY", now=NOW)
    with pytest.raises(RoomError, match="has expired"):
        store.room(room.code, now=NOW + 4 * 3600 + 1)
    store.close(room.code, token, now=NOW)
    with pytest.raises(RoomError, match="has been closed"):
        store.join(room.code, "phone-2", now=NOW)


def test_only_the_presenter_token_moves_reveals_resets_and_closes(store):
    room, token = _open(store)
    for act in (
        lambda t: store.move(room.code, t, 1, now=NOW),
        lambda t: store.reveal(room.code, t, now=NOW),
        lambda t: store.reset(room.code, t, now=NOW),
        lambda t: store.close(room.code, t, now=NOW),
        lambda t: store.export_csv(room.code, t),
    ):
        with pytest.raises(RoomError, match="Only the lecturer"):
            act("not-the-token")
    assert store.is_presenter(room.code, token) and not store.is_presenter(room.code, token + "x")
    assert store.move(room.code, token, 1, now=NOW).current == 1
    assert store.reveal(room.code, token, now=NOW).revealed
    assert store.move(room.code, token, 2, now=NOW).current == 0  # wraps around, hides the answer again
    assert not store.room(room.code, now=NOW).revealed


def test_one_vote_per_device_and_a_new_answer_replaces_the_old(store):
    room, _ = _open(store)
    store.answer(room.code, "phone-1", 0, "Two", now=NOW)
    store.answer(room.code, "phone-1", 0, "dogs", now=NOW + 1)
    store.answer(room.code, "phone-2", 0, "dogs", now=NOW + 1)
    progress = store.progress(room.code, 0)
    assert progress.tally.answered == 2 and progress.joined == 2
    assert {bar.label: bar.count for bar in progress.tally.bars} == {"Two": 0, "dogs": 2, "<b>play</b>": 0}
    assert progress.tally.right == 2
    assert store.my_answer(room.code, "phone-1", 0) == "dogs"


def test_flooding_keeps_one_vote(store):
    room, _ = _open(store)
    for i in range(100):  # 100 answers in one second from one phone, alternating
        store.answer(room.code, "flood", 0, ("Two", "dogs")[i % 2], now=NOW + i / 100)
    store.answer(room.code, "calm", 0, "dogs", now=NOW + 0.5)
    assert store.progress(room.code, 0).tally.answered == 2


@pytest.mark.parametrize(
    "position, raw, message",
    [
        (0, "cats", "not one of the question's options"),
        (0, 3, "not one of the question's options"),
        (1, "many", "must be a number"),
        (1, True, "must be a number"),
        (1, 101, "between 0 and 100"),
        (1, "nan", "between 0 and 100"),
        (1, -0.5, "between 0 and 100"),
    ],
)
def test_out_of_range_or_wrong_type_answers_are_refused(store, position, raw, message):
    room, token = _open(store)
    store.move(room.code, token, position, now=NOW)
    with pytest.raises(RoomError, match=message):
        store.answer(room.code, "phone-1", position, raw, now=NOW)
    assert store.progress(room.code, position).tally.answered == 0


def test_no_answers_to_another_question_or_after_the_reveal(store):
    room, token = _open(store)
    with pytest.raises(RoomError, match="moved on"):
        store.answer(room.code, "phone-1", 1, 50, now=NOW)
    store.reveal(room.code, token, now=NOW)
    with pytest.raises(RoomError, match="revealed"):
        store.answer(room.code, "phone-1", 0, "dogs", now=NOW)
    with pytest.raises(RoomError, match="valid identifier"):
        store.answer(room.code, "bad device!", 0, "dogs", now=NOW)


def test_reset_deletes_the_current_questions_answers(store):
    room, token = _open(store)
    store.answer(room.code, "phone-1", 0, "dogs", now=NOW)
    store.reveal(room.code, token, now=NOW)
    assert not store.reset(room.code, token, now=NOW).revealed
    assert store.progress(room.code, 0).tally.answered == 0


def test_the_csv_has_question_answer_and_time_only(store):
    room, token = _open(store)
    store.answer(room.code, "phone-secret-id", 0, "dogs", now=NOW)
    store.move(room.code, token, 1, now=NOW)
    store.answer(room.code, "phone-secret-id", 1, "55", now=NOW + 2)
    text = store.export_csv(room.code, token)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["question", "answer", "time"]
    assert all(len(row) == 3 for row in rows)
    assert [row[1] for row in rows[1:]] == ["dogs", "55.0"]
    assert rows[1][0].startswith("Encoder-decoder attention, layer 3, head 1") and rows[2][2].endswith("+00:00")
    assert "phone-secret-id" not in text


def test_a_restart_keeps_rooms_questions_answers_and_state(database_url):
    first = schema.make_engine(database_url)
    room, token = _open(RoomStore(first))
    RoomStore(first).answer(room.code, "phone-1", 0, "dogs", now=NOW)
    RoomStore(first).reveal(room.code, token, now=NOW)
    first.dispose()  # the server stops
    second = RoomStore(schema.make_engine(database_url))  # a new server on the same database
    again = second.room(room.code, now=NOW + 60)
    assert again.revealed and again.current == 0 and again.count == 2
    assert second.is_presenter(room.code, token)
    assert second.progress(room.code, 0).tally.answered == 1
    assert second.exercise(room.code, 1) == exercises()[1]
    second.engine.dispose()


def test_the_default_database_is_an_sqlite_file_in_wal_mode_in_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(schema.DATABASE_ENV, raising=False)
    monkeypatch.setenv(schema.RUNS_ENV, str(tmp_path / "runs"))
    url = schema.database_url()
    assert url == f"sqlite:///{tmp_path / 'runs' / 'rooms.sqlite'}"
    engine = schema.make_engine(url)
    with engine.connect() as db:
        assert db.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    engine.dispose()
    monkeypatch.setenv(schema.DATABASE_ENV, "postgresql+psycopg://db-host/explorer")
    assert schema.database_url() == "postgresql+psycopg://db-host/explorer"


def test_numbers_are_binned_in_the_questions_units():
    number = exercises()[1]
    result = tally(number, ["5.0", "15.0", "62.0", "65.0", "100.0"])
    assert [bar.label for bar in result.bars][:2] == ["0\u201310", "10\u201320"]
    assert len(result.bars) == 10 and sum(bar.count for bar in result.bars) == 5
    assert [bar.label for bar in result.bars if bar.right] == ["60\u201370"]
    assert result.bars[-1].count == 1  # the top of the range falls in the last bar
    assert result.right == 2 and result.right_share == pytest.approx(0.4)
