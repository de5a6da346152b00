"""A throwaway PostgreSQL server (initdb + pg_ctl in a temporary folder, on a free local port) for the room
benchmark's two-server run and the room tests (tests/rooms/conftest.py): Debian's `postgresql` binaries, which
`.ci/run` installs; as the `postgres` user when this runs as root (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL could be started here; the message says why."""


def _binaries() -> Path | None:
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


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """The URL (postgresql+psycopg://…) of a new, empty PostgreSQL server, stopped and deleted on exit."""
    binaries = _binaries()
    if binaries is None:
        raise PostgresUnavailable(
            "no PostgreSQL binaries (initdb, pg_ctl, postgres): .ci/run installs Debian's postgresql"
        )
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None or subprocess.run(["id", "postgres"], capture_output=True).returncode:
            raise PostgresUnavailable("running as root without a 'postgres' user to start PostgreSQL as")
        prefix = ["runuser", "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="explorer-pg-"))
    if prefix:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", _free_port()
    pg_ctl = [*prefix, str(binaries / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run(
            [*prefix, str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
            check=True,
            capture_output=True,
        )
        # fsync off: a throwaway database; max_connections for two app servers' pools and 200 students' threads.
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
        subprocess.run(
            [*pg_ctl, "-o", options, "-l", str(folder / "log"), "-w", "start"], check=True, capture_output=True
        )
    except subprocess.CalledProcessError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise PostgresUnavailable(f"PostgreSQL did not start: {error.stderr.decode(errors='replace')[-300:]}") from None
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*pg_ctl, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
