"""Fixtures of the room tests: a store on a fresh SQLite file, and the same on a throwaway PostgreSQL server
(initdb + pg_ctl in a temporary folder on a free port), so every storage test runs on both databases."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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


def _postgres_bin() -> Path | None:
    for candidate in [shutil.which("initdb"), *sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)]:
        if (
            candidate
            and Path(candidate).with_name("pg_ctl").exists()
            and Path(candidate).with_name("postgres").exists()
        ):
            return Path(candidate).parent
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of its own for this test session; skipped, saying why, where none can start."""
    binaries = _postgres_bin()
    if binaries is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl, postgres): .ci/run installs Debian's postgresql")
    prefix: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root: as the postgres user where there is one
        if shutil.which("runuser") is None or subprocess.run(["id", "postgres"], capture_output=True).returncode:
            pytest.skip("running as root without a 'postgres' user to start PostgreSQL as")
        prefix = ["runuser", "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="explorer-pg-"))
    if prefix:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", _free_port()
    try:
        subprocess.run(
            [*prefix, str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [
                *prefix,
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(folder / "log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError as error:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"PostgreSQL did not start: {error.stderr.decode(errors='replace')[-300:]}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(folder, ignore_errors=True)


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
