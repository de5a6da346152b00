"""Where rooms are stored: three tables on SQLAlchemy Core, and the engine for the configured database.

One URL chooses the database: `EXPLORER_DATABASE_URL` (for example
`postgresql+psycopg://user:secret@db-host/explorer`, shared by several app servers behind a load balancer);
unset, an SQLite file `rooms.sqlite` in the app's data folder (`$EXPLORER_RUNS`, else runs/app/ in the
repository: where the Train page keeps its runs). SQLite runs in WAL mode, so students' answers (writes) never
wait for the projector's polls (reads), and a crash loses nothing that was committed.

    rooms      code, presenter token (its SHA-256 only), checkpoint, sentence, language, times, state
    questions  room, position, the exercise as JSON (explorer.tour.exercises.Exercise)
    answers    question, device, value, time; one row per (question, device)
    members    room, device, time of joining; one row per (room, device)
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
)

DATABASE_ENV, RUNS_ENV = "EXPLORER_DATABASE_URL", "EXPLORER_RUNS"
SQLITE_FILE = "rooms.sqlite"
REPO_ROOT = Path(__file__).resolve().parents[2]

metadata = MetaData()

rooms = Table(
    "rooms",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("token_hash", String(64), nullable=False),
    Column("checkpoint", Text, nullable=False),
    Column("sentence", Text, nullable=False),
    Column("lang", String(8), nullable=False),
    Column("created_at", Float, nullable=False),  # seconds since the epoch (UTC)
    Column("expires_at", Float, nullable=False),
    Column("closed", Boolean, nullable=False, default=False),
    Column("current", Integer, nullable=False, default=0),  # position of the question on every phone
    Column("revealed", Boolean, nullable=False, default=False),
)

questions = Table(
    "questions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("room_code", String(16), ForeignKey("rooms.code", ondelete="CASCADE"), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("exercise", Text, nullable=False),  # JSON of the Exercise's fields
    UniqueConstraint("room_code", "position", name="one_question_per_position"),
)

answers = Table(
    "answers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("question_id", Integer, ForeignKey("questions.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("device", String(64), nullable=False),
    Column("value", Text, nullable=False),  # a choice's option, or a number as text
    Column("answered_at", Float, nullable=False),
    UniqueConstraint("question_id", "device", name="one_answer_per_device"),
)

members = Table(
    "members",
    metadata,
    Column("room_code", String(16), ForeignKey("rooms.code", ondelete="CASCADE"), nullable=False),
    Column("device", String(64), nullable=False),
    Column("joined_at", Float, nullable=False),
    UniqueConstraint("room_code", "device", name="one_member_per_device"),
)


def data_folder() -> Path:
    """The app's data folder: $EXPLORER_RUNS, else runs/app/ in the repository (as ui/train/runs.py)."""
    return Path(os.environ.get(RUNS_ENV) or REPO_ROOT / "runs" / "app")


def database_url() -> str:
    """$EXPLORER_DATABASE_URL, else the SQLite file in the data folder."""
    configured = os.environ.get(DATABASE_ENV, "").strip()
    return configured or f"sqlite:///{data_folder() / SQLITE_FILE}"


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, the writer never blocks readers
    cursor.execute("PRAGMA synchronous=NORMAL")  # in WAL mode still durable across a crash of the app
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    """A new engine on `url`, its tables created if missing (creating is idempotent, also across servers)."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # Streamlit runs every browser tab in a thread of its own; 30 s of waiting for the write lock, not 5.
        engine = create_engine(
            url, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=10, max_overflow=40
        )
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    metadata.create_all(engine, checkfirst=True)
    return engine


@functools.cache
def engine_for(url: str) -> Engine:
    """One engine (one connection pool) per database URL in this process."""
    return make_engine(url)
