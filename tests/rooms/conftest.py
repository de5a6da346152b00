"""Fixtures of the room tests: a store on a fresh SQLite file, and the same on a throwaway PostgreSQL server
(initdb + pg_ctl in a temporary folder on a free port), so every storage test runs on both databases."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.room_postgres import PostgresUnavailable, throwaway_postgres
from explorer.rooms import schema
from explorer.rooms.store import RoomStore
from explorer.tour.exercises import CHOICE, NUMBER, Exercise


def exercises() -> list[Exercise]:
    """A choice and a number question, as the tour makes them (explorer/tour/exercises.py)."""
    return [
        Exercise(
            "cross_head",
            3,
            "Encoder-decoder attention, layer {layer}, head {head}: when the decoder produces \u201c{word}\u201d, "
            "which source token does it look at most?",
            CHOICE,
            "dogs",
            "Head {head} of layer {layer} gives \u201c{answer}\u201d a weight of {weight} when it produces "
            "\u201c{word}\u201d. Other heads of the same layer may look elsewhere: that is what multiple heads are "
            "for.",
            dict(layer=3, head=1, word="Hunde", answer="dogs", weight="0.71"),
            options=("Two", "dogs", "<b>play</b>"),
        ),
        Exercise(
            "relu_zeros",
            4,
            "The feed-forward network of encoder layer {layer} has d_ff = {d_ff} inner units per token. For this "
            "sentence, what percentage of them does the ReLU set to exactly zero?",
            NUMBER,
            62.0,
            "{answer}% of the {d_ff} \u00d7 {tokens} inner values are zero: max(0, \u00b7) keeps only the units "
            "whose pre-activation is positive, so each token uses a different part of the layer.",
            dict(layer=1, d_ff=1024, answer=62, tokens=7),
            low=0,
            high=100,
            step=1,
            tolerance=10,
        ),
    ]


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of its own for this test session; skipped, saying why, where none can start."""
    try:
        with throwaway_postgres() as url:
            yield url
    except PostgresUnavailable as error:
        pytest.skip(str(error))


# The PostgreSQL runs start a server: slow (in the CI run; `-m "not slow"` leaves them out).
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def database_url(request, tmp_path) -> Iterator[str]:
    """A fresh, empty database: a new SQLite file, or the session's PostgreSQL with its tables dropped."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'rooms.sqlite'}"
        return
    url = request.getfixturevalue("postgres_url")
    engine = schema.make_engine(url)
    schema.metadata.drop_all(engine)
    engine.dispose()
    yield url


@pytest.fixture
def store(database_url) -> Iterator[RoomStore]:
    engine = schema.make_engine(database_url)
    yield RoomStore(engine)
    engine.dispose()
