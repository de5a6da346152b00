"""Real phones in a room: headless Chromium pages at 390×844 on the app's join page (ui/room/join.py), answering
with a tap beside the simulated students of benchmarks/room.py, on app servers started as users start them
(`python app.py`). One run has one server on an SQLite file; another has two servers on different ports sharing
one PostgreSQL database, the phones spread over both: every answer must be recorded once, and every phone, on
either server, must show the same share of the class after the reveal.

Measured: the p95 time from a phone's tap to the presenter's next count that includes it (the presenter polls
the database as the room panel does, every POLL_S), the p95 time from the reveal to each phone showing it
without being touched, and each server's CPU time and peak memory (from /proc).

    python -m benchmarks --only room                          # the simulated room, then these runs
    python -m benchmarks.room_browsers --phones 20 --students 200
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import os
import random
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from benchmarks import room
from benchmarks.browser_pages import browser_helpers, cpu_seconds
from benchmarks.common import percentile
from explorer.rooms import schema
from explorer.rooms.store import RoomStore

PHONE = {"width": 390, "height": 844}
REVEALED = "of the class was right"  # the phone's line after the reveal (ui/room/join.py)
LOAD_MS = 180_000  # a page load on a busy 2-core machine, twenty at a time
LOAD_AT_ONCE = 5  # phones loading together: a lecture hall's phones do not all open the link in one instant


@dataclass
class BrowserRun:
    servers: int
    database: str  # "sqlite" or "postgresql"
    phones: int
    loaded: int  # phones whose page loaded (within LOAD_MS) and took part
    students: int  # simulated, beside the phones
    recorded: int  # the question's rows for phones and simulated students (the flooding device's left out)
    flood_votes: int
    tap_to_count_s: list[float] = field(default_factory=list)  # per phone
    reveal_to_phone_s: list[float] = field(default_factory=list)  # per phone that showed the reveal
    shares: list[str] = field(default_factory=list)  # what each phone showed after the reveal
    cpu_s: list[float] = field(default_factory=list)  # per server, from the room's opening to the end
    peak_mib: list[float] = field(default_factory=list)  # per server, over its whole life
    wall_s: float = 0.0


def peak_mib(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.contextmanager
def app_servers(count: int, database_url: str, folder: Path) -> Iterator[list[tuple[Any, Any]]]:
    """`count` app servers (`python app.py`, each on a free port) on `database_url`: [(process, App)]."""
    helpers = browser_helpers()
    saved = os.environ.get(schema.DATABASE_ENV)
    os.environ[schema.DATABASE_ENV] = database_url  # the servers inherit this process's environment
    started: list[tuple[Any, Any]] = []
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for i in range(count):
            started.append(helpers.start_server(folder / f"server-{i}.log", runs=folder / f"runs-{i}"))
        yield started
    finally:
        for process, _ in started:
            helpers.stop_server(process)
        if saved is None:
            os.environ.pop(schema.DATABASE_ENV, None)
        else:
            os.environ[schema.DATABASE_ENV] = saved


def _answered(store: RoomStore, code: str) -> dict[str, float]:
    """Device → time of its answer, for the room's first question: what the presenter's count is made of."""
    with store.engine.connect() as db:
        rows = db.execute(
            select(schema.answers.c.device, schema.answers.c.answered_at)
            .join(schema.questions, schema.questions.c.id == schema.answers.c.question_id)
            .where(schema.questions.c.room_code == code, schema.questions.c.position == 0)
        ).all()
    return {device: at for device, at in rows}


async def _phone(browser: Any, server: str, code: str, device: str) -> tuple[Any, Any, str]:
    url = f"{server}/join?room={code}&device={device}"
    context = await browser.new_context(viewport=PHONE, locale="en-US")
    context.set_default_timeout(LOAD_MS)
    page = await context.new_page()
    await page.goto(url, timeout=LOAD_MS, wait_until="commit")  # the answer buttons, below, are what counts
    await page.locator(".st-key-join_option_0_0 button").first.wait_for(timeout=LOAD_MS)
    return context, page, device


async def _tap(page: Any, option: int, at: float) -> float:
    await asyncio.sleep(max(0.0, at - time.perf_counter()))
    tapped = time.perf_counter()
    await page.locator(f".st-key-join_option_0_{option} button").first.click()
    return tapped


async def _follow(page: Any, revealed_at: float) -> tuple[float, str]:
    line = page.get_by_text(REVEALED).first
    await line.wait_for(timeout=60_000)
    seen = time.perf_counter() - revealed_at
    return seen, (await line.inner_text()).strip()


async def _room_with_phones(
    urls: Sequence[str], pids: Sequence[int], database_url: str, phones: int, students: int, window_s: float
) -> BrowserRun:
    from playwright.async_api import async_playwright

    helpers = browser_helpers()
    engines = [schema.make_engine(database_url) for _ in urls]
    stores = [RoomStore(e) for e in engines]
    store = stores[0]
    opened, token = store.open_room("benchmark", "Two dogs play in the snow.", [room.QUESTION])
    code = opened.code
    options = len(room.QUESTION.options)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=helpers.chromium_path(), args=helpers.CHROMIUM_ARGS, headless=True
        )
        try:
            pages: list[tuple[Any, Any, str]] = []
            for first in range(0, phones, LOAD_AT_ONCE):
                batch = range(first, min(phones, first + LOAD_AT_ONCE))
                loaded = await asyncio.gather(
                    *(_phone(browser, urls[i % len(urls)], code, f"phone-{i:04d}") for i in batch),
                    return_exceptions=True,
                )
                # A phone whose page did not load in LOAD_MS is left out, and reported as not loaded.
                pages += [each for each in loaded if isinstance(each, tuple)]
            cpu0 = [cpu_seconds(pid) for pid in pids]
            wall0 = time.perf_counter()
            start = wall0 + room.POLL_S
            crowd = room.start_crowd(stores, code, students, start, window_s, room.POLL_S)
            taps = asyncio.gather(
                *(
                    _tap(page, random.Random(-i).randrange(options), start + random.Random(-i).uniform(0, window_s))
                    for i, (_, page, _) in enumerate(pages)
                ),
                return_exceptions=True,
            )
            # The presenter: every POLL_S, the count (as the panel reads it) and who it includes.
            seen: dict[str, float] = {}
            everyone = len(pages) + students
            while True:
                await asyncio.to_thread(store.progress, code, 0)
                polled = time.perf_counter()
                for device in await asyncio.to_thread(_answered, store, code):
                    seen.setdefault(device, polled)
                if (
                    sum(d.startswith(("phone-", "student-")) for d in seen) >= everyone
                    or polled - start > window_s + 90
                ):
                    break
                await asyncio.sleep(room.POLL_S)
            tapped = await taps
            await asyncio.to_thread(crowd.stop_flood)
            revealed_at = time.perf_counter()
            store.reveal(code, token)
            followed = await asyncio.gather(
                *(_follow(page, revealed_at) for _, page, _ in pages), return_exceptions=True
            )
            for thread in crowd.threads:
                await asyncio.to_thread(thread.join, 60)
            cpu = [cpu_seconds(pid) - before for pid, before in zip(pids, cpu0, strict=True)]
            wall = time.perf_counter() - wall0
            for context, _, _ in pages:
                await context.close()
        finally:
            await browser.close()
    answered = _answered(store, code)
    for engine in engines:
        engine.dispose()
    shown = [f for f in followed if isinstance(f, tuple)]
    return BrowserRun(
        servers=len(urls),
        database=database_url.split(":", 1)[0].split("+", 1)[0],
        phones=phones,
        loaded=len(pages),
        students=students,
        recorded=sum(d.startswith(("phone-", "student-")) for d in answered),
        flood_votes=int("flooding-device" in answered),
        tap_to_count_s=[
            seen[device] - t
            for (_, _, device), t in zip(pages, tapped, strict=True)
            if isinstance(t, float) and device in seen
        ],
        reveal_to_phone_s=[s for s, _ in shown],
        shares=[text for _, text in shown],
        cpu_s=cpu,
        peak_mib=[peak_mib(pid) for pid in pids],
        wall_s=wall,
    )


def measure(servers: int, database_url: str, phones: int, students: int, window_s: float, folder: Path) -> BrowserRun:
    """`phones` real phones and `students` simulated ones answering within `window_s` on `servers` app servers
    sharing `database_url`."""
    with app_servers(servers, database_url, folder) as started:
        urls = [app.url for _, app in started]
        pids = [process.pid for process, _ in started]
        # In a thread of its own: the caller's thread may already run an event loop (a test session's
        # synchronous Playwright does), where asyncio.run refuses to start.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(
                asyncio.run, _room_with_phones(urls, pids, database_url, phones, students, window_s)
            ).result()


@contextlib.contextmanager
def shared_database() -> Iterator[str | None]:
    """A PostgreSQL URL for the two-server run: $EXPLORER_DATABASE_URL if it is one, else a throwaway server;
    None where none can start."""
    from benchmarks.room_postgres import PostgresUnavailable, throwaway_postgres

    configured = os.environ.get(schema.DATABASE_ENV, "").strip()
    if configured.startswith("postgresql"):
        yield configured
        return
    try:
        with throwaway_postgres() as url:
            yield url
    except PostgresUnavailable:
        yield None


def rows(result: Any, run: BrowserRun) -> None:
    """`run` as rows of the room benchmark's table (benchmarks/room.py)."""
    expected = run.loaded + run.students
    where = f"{run.servers} server{'s' if run.servers > 1 else ''} on {run.database}"
    result.add(
        f"{where}, {run.phones} phones + {run.students} simulated: answers recorded",
        f"{run.recorded}/{expected} ({run.loaded}/{run.phones} phones loaded)",
        f"all {run.phones + run.students}",
        run.recorded == expected and run.flood_votes == 1 and run.loaded == run.phones,
    )
    for what, seconds in (
        ("phone tap \u2192 presenter's count", run.tap_to_count_s),
        ("reveal \u2192 phone shows it", run.reveal_to_phone_s),
    ):
        p95 = percentile(seconds, 95)
        result.add(
            f"{where}: p95 {what}",
            f"{p95:.2f} s ({len(seconds)}/{run.phones} phones)",
            f"\u2264 {room.GOAL_S:g} s",
            p95 <= room.GOAL_S and len(seconds) == run.phones,
        )
    if run.servers > 1:
        result.add(
            f"{where}: share of the class shown by every phone",
            " | ".join(sorted(set(run.shares))) or "none",
            "one value on both servers",
            len(set(run.shares)) == 1 and len(run.shares) == run.phones,
        )
    result.add(
        f"{where}: server CPU, peak memory",
        ", ".join(
            f"{cpu:.1f} s CPU over {run.wall_s:.1f} s ({100 * cpu / run.wall_s:.0f}% of a core), {mib:.0f} MiB"
            for cpu, mib in zip(run.cpu_s, run.peak_mib, strict=True)
        ),
    )


def main(argv: list[str] | None = None) -> int:
    from benchmarks.common import Result

    parser = argparse.ArgumentParser(prog="python -m benchmarks.room_browsers", description=__doc__)
    parser.add_argument("--phones", type=int, default=20)
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--window", type=float, default=10.0)
    args = parser.parse_args(argv)
    result = Result(room.NAME, "A room with real phones")
    with tempfile.TemporaryDirectory(prefix="explorer-room-browsers-") as folder:
        run(result, args.phones, args.students, args.window, Path(folder))
    for row in result.rows:
        print(
            f"{row.measure}: {row.value}"
            + (f" (goal {row.goal}: {'met' if row.met else 'NOT met'})" if row.goal else "")
        )
    return 0


def run(result: Any, phones: int, students: int, window_s: float, folder: Path) -> None:
    """Both runs (one server on SQLite, two on PostgreSQL) as rows of `result`."""
    sqlite = f"sqlite:///{folder / 'rooms.sqlite'}"
    rows(result, measure(1, sqlite, phones, students, window_s, folder / "one"))
    with shared_database() as postgres:
        if postgres is None:
            result.note("two app servers on PostgreSQL: skipped, no PostgreSQL could be started here")
            return
        rows(result, measure(2, postgres, phones, students, window_s, folder / "two"))


if __name__ == "__main__":
    raise SystemExit(main())
