"""Classroom rooms: a lecturer opens a room on the tour's exercises, students answer from their phones, the
projector counts, the lecturer reveals. Every page reads and writes rooms only through `RoomStore`, so several
app servers on one database (explorer/rooms/schema.py) see the same rooms.

The presenter token is returned once, by `open_room`, and only its SHA-256 is stored: whoever holds the token
(the lecturer's browser tab) may move, reveal, reset or close; a student's device only joins and answers.
Every function takes `now` (seconds since the epoch) so that expiry is tested without waiting.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Engine, Row, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from explorer.i18n import translate
from explorer.rooms import schema
from explorer.rooms.schema import answers, members, questions, rooms
from explorer.rooms.tally import RoomError, Tally, checked_answer, exercise_from_json, exercise_to_json, tally
from explorer.tour.exercises import Exercise

# Unambiguous on a projector and a phone keyboard: no 0/O, 1/I/L. 31 symbols, 8 of them: 39.6 bits.
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 8
DEFAULT_HOURS = 4.0
DEVICE_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_")
# A device's changed answer replaces its vote at most this often: a phone flooding the room with answers
# writes a few rows a second, not hundreds, and its vote stays one.
MIN_CHANGE_S = 0.25


@dataclass(frozen=True)
class Room:
    code: str
    checkpoint: str
    sentence: str
    lang: str
    created_at: float
    expires_at: float
    current: int  # position of the question on every phone, 0-based
    revealed: bool
    count: int  # number of questions


@dataclass(frozen=True)
class Progress:
    """What the projector counts for the current question."""

    joined: int
    tally: Tally


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str:
    """A typed code as stored (upper case, without spaces or dashes), or RoomError when it cannot be one."""
    code = "".join(str(text).split()).replace("-", "").upper()
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        raise RoomError(
            "\u201c{code}\u201d is not a room code: a code has {length} letters and digits.",
            code=str(text)[:20],
            length=CODE_LENGTH,
        )
    return code


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _device(device: str) -> str:
    if not device or len(device) > 64 or not set(device) <= DEVICE_CHARS:
        raise RoomError("This device has no valid identifier: reload the page.")
    return device


class RoomStore:
    """Rooms on one database. Cheap to make; the engine (and its connection pool) is shared."""

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine if engine is not None else schema.engine_for(schema.database_url())

    # ---- the lecturer -----------------------------------------------------------------------------------
    def open_room(
        self,
        checkpoint: str,
        sentence: str,
        exercises: Sequence[Exercise],
        *,
        lang: str = "en",
        hours: float = DEFAULT_HOURS,
        now: float | None = None,
    ) -> tuple[Room, str]:
        """A new room on `exercises` (in order) for `checkpoint` and `sentence`: the room and its presenter
        token, which is not stored and cannot be recovered."""
        assert exercises, "a room needs at least one question"
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(24)
        with self.engine.begin() as db:
            for _ in range(5):  # a clash in 31^8 codes is rare; a few tries make it vanishingly so
                code = new_code()
                if db.execute(select(rooms.c.code).where(rooms.c.code == code)).first() is None:
                    break
            db.execute(
                insert(rooms).values(
                    code=code,
                    token_hash=_hash(token),
                    checkpoint=checkpoint,
                    sentence=sentence,
                    lang=lang,
                    created_at=now,
                    expires_at=now + hours * 3600,
                    closed=False,
                    current=0,
                    revealed=False,
                )
            )
            db.execute(
                insert(questions),
                [{"room_code": code, "position": i, "exercise": exercise_to_json(e)} for i, e in enumerate(exercises)],
            )
        return Room(code, checkpoint, sentence, lang, now, now + hours * 3600, 0, False, len(exercises)), token

    def _owned(self, code: str, token: str, now: float | None) -> Room:
        room = self.room(code, now=now)
        with self.engine.connect() as db:
            stored = db.execute(select(rooms.c.token_hash).where(rooms.c.code == room.code)).scalar_one()
        if not hmac.compare_digest(stored, _hash(token)):
            raise RoomError("Only the lecturer's browser tab that opened this room can change it.")
        return room

    def _set(self, code: str, **values: Any) -> None:
        with self.engine.begin() as db:
            db.execute(update(rooms).where(rooms.c.code == code).values(**values))

    def move(self, code: str, token: str, position: int, *, now: float | None = None) -> Room:
        """Every phone to question `position` (wrapping around), its answers not yet revealed."""
        room = self._owned(code, token, now)
        self._set(room.code, current=position % room.count, revealed=False)
        return self.room(room.code, now=now)

    def ask(self, code: str, token: str, exercise: Exercise, *, now: float | None = None) -> Room:
        """A question the lecturer adds from a page: appended after the room's questions, and every phone moved
        to it, not yet revealed."""
        room = self._owned(code, token, now)
        with self.engine.begin() as db:
            db.execute(
                insert(questions).values(room_code=room.code, position=room.count, exercise=exercise_to_json(exercise))
            )
            db.execute(update(rooms).where(rooms.c.code == room.code).values(current=room.count, revealed=False))
        return self.room(room.code, now=now)

    def reveal(self, code: str, token: str, revealed: bool = True, *, now: float | None = None) -> Room:
        room = self._owned(code, token, now)
        self._set(room.code, revealed=revealed)
        return self.room(room.code, now=now)

    def reset(self, code: str, token: str, *, now: float | None = None) -> Room:
        """The current question again: its answers deleted, the reveal undone."""
        room = self._owned(code, token, now)
        with self.engine.begin() as db:
            question = self._question_id(db, room.code, room.current)
            db.execute(delete(answers).where(answers.c.question_id == question))
            db.execute(update(rooms).where(rooms.c.code == room.code).values(revealed=False))
        return self.room(room.code, now=now)

    def close(self, code: str, token: str, *, now: float | None = None) -> None:
        room = self._owned(code, token, now)
        self._set(room.code, closed=True)

    def is_presenter(self, code: str, token: str) -> bool:
        try:
            self._owned(code, token, None)
        except RoomError:
            return False
        return True

    # ---- everyone -----------------------------------------------------------------------------------------
    def room(self, code: str, *, now: float | None = None) -> Room:
        """The open room with this code, or RoomError saying it is malformed, unknown, closed or expired."""
        code = normalize_code(code)
        now = time.time() if now is None else now
        with self.engine.connect() as db:
            row = db.execute(select(rooms).where(rooms.c.code == code)).first()
            count = db.execute(select(func.count()).where(questions.c.room_code == code)).scalar_one()
        if row is None:
            raise RoomError("There is no room {code}: check the code on the projector.", code=code)
        if row.closed:
            raise RoomError("Room {code} has been closed.", code=code)
        if now > row.expires_at:
            raise RoomError("Room {code} has expired: ask for a new code.", code=code)
        return _room(row, count)

    def exercise(self, code: str, position: int) -> Exercise:
        with self.engine.connect() as db:
            text = db.execute(
                select(questions.c.exercise).where(questions.c.room_code == code, questions.c.position == position)
            ).scalar_one()
        return exercise_from_json(text)

    # ---- a student ----------------------------------------------------------------------------------------
    def join(self, code: str, device: str, *, now: float | None = None) -> Room:
        room = self.room(code, now=now)
        now = time.time() if now is None else now
        row = {"room_code": room.code, "device": _device(device), "joined_at": now}
        with self.engine.begin() as db:
            db.execute(self._insert(members).values(**row).on_conflict_do_nothing())
        return room

    def answer(self, code: str, device: str, position: int, raw: object, *, now: float | None = None) -> str:
        """Record (or replace) this device's answer to question `position`; the stored text. RoomError when the
        room, the question or the answer refuses it."""
        room = self.room(code, now=now)
        now = time.time() if now is None else now
        device = _device(device)
        if position != room.current:
            raise RoomError("The lecturer has moved on to another question.")
        if room.revealed:
            raise RoomError("The answer has been revealed: answers are closed.")
        value = checked_answer(self.exercise(room.code, position), raw)
        with self.engine.begin() as db:
            question = self._question_id(db, room.code, position)
            statement = self._insert(answers).values(question_id=question, device=device, value=value, answered_at=now)
            # One row per (question, device): a new value replaces the old one, the same value writes nothing.
            statement = statement.on_conflict_do_update(
                index_elements=[answers.c.question_id, answers.c.device],
                set_={"value": statement.excluded.value, "answered_at": statement.excluded.answered_at},
                where=(answers.c.value != statement.excluded.value)
                & (statement.excluded.answered_at - answers.c.answered_at >= MIN_CHANGE_S),
            )
            db.execute(statement)
            db.execute(
                self._insert(members).values(room_code=room.code, device=device, joined_at=now).on_conflict_do_nothing()
            )
        return value

    def my_answer(self, code: str, device: str, position: int) -> str | None:
        with self.engine.connect() as db:
            question = self._question_id(db, code, position)
            return db.execute(
                select(answers.c.value).where(answers.c.question_id == question, answers.c.device == device)
            ).scalar_one_or_none()

    # ---- the projector ------------------------------------------------------------------------------------
    def progress(self, code: str, position: int) -> Progress:
        """Joined devices and the bars of question `position`'s answers."""
        exercise = self.exercise(code, position)
        with self.engine.connect() as db:
            question = self._question_id(db, code, position)
            values = db.execute(select(answers.c.value).where(answers.c.question_id == question)).scalars().all()
            joined = db.execute(select(func.count()).where(members.c.room_code == code)).scalar_one()
        return Progress(int(joined), tally(exercise, list(values)))

    def export_csv(self, code: str, token: str) -> str:
        """Every answer of the room: question, answer, time (UTC, ISO 8601). No device, name or address."""
        room = self._owned(code, token, None)
        with self.engine.connect() as db:
            rows = db.execute(
                select(questions.c.exercise, answers.c.value, answers.c.answered_at)
                .join(answers, answers.c.question_id == questions.c.id)
                .where(questions.c.room_code == room.code)
                .order_by(questions.c.position, answers.c.answered_at)
            ).all()
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["question", "answer", "time"])
        for text, value, at in rows:
            exercise = exercise_from_json(text)
            question = translate(exercise.question, room.lang, **exercise.fields)
            writer.writerow([question, value, datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds")])
        return out.getvalue()

    # ---- helpers ------------------------------------------------------------------------------------------
    def _insert(self, table: Any) -> Any:
        """INSERT with ON CONFLICT, which SQLite and PostgreSQL both have (each dialect its own construct)."""
        return (postgresql_insert if self.engine.dialect.name == "postgresql" else sqlite_insert)(table)

    @staticmethod
    def _question_id(db: Any, code: str, position: int) -> int:
        found = db.execute(
            select(questions.c.id).where(questions.c.room_code == code, questions.c.position == position)
        ).scalar_one_or_none()
        if found is None:
            raise RoomError("This room has no question {number}.", number=position + 1)
        return int(found)


def _room(row: Row[Any], count: int) -> Room:
    return Room(
        row.code,
        row.checkpoint,
        row.sentence,
        row.lang,
        row.created_at,
        row.expires_at,
        int(row.current),
        bool(row.revealed),
        int(count),
    )
