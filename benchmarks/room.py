"""A room of 200: simulated students answer one question within 10 s through the store the pages use
(explorer/rooms/store.py), each polling as the phone page does, while the presenter's panel polls the counts
and then reveals. Reports every answer recorded exactly once, the p95 time from an answer to its appearance in
the presenter's count, the p95 time from the reveal to each phone showing it, and this process's CPU and peak
memory. One device floods the room with 100 answers a second throughout.

    python -m benchmarks --only room            # 200 students, 10 s, a fresh SQLite file; then 20 real phones
                                                # beside them on one app server, and on two sharing PostgreSQL
    EXPLORER_DATABASE_URL=postgresql+psycopg://… python -m benchmarks --only room   # on a shared PostgreSQL

Each student is a thread, as each browser tab is a thread of the Streamlit server; the polling interval is the
pages' (ui/room/common.py, POLL_S).
"""

from __future__ import annotations

import os
import random
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import Options, Result, percentile
from explorer.rooms import schema
from explorer.rooms.store import RoomStore
from explorer.rooms.tally import RoomError
from explorer.tour.exercises import CHOICE, Exercise

NAME = "room"
TITLE = "A room of 200 students"
POLL_S = 1.0  # the pages' interval (ui/room/common.py imports streamlit, so it is repeated here)
GOAL_S = 2.0
FLOOD_PER_S = 100
PHONES = 20  # real headless-browser phones beside the simulated students (benchmarks/room_browsers.py)
QUESTION = Exercise(
    "cross_head",
    3,
    "Encoder-decoder attention, layer {layer}, head {head}: when the decoder produces \u201c{word}\u201d, which "
    "source token does it look at most?",
    CHOICE,
    "dogs",
    "Head {head} of layer {layer} gives \u201c{answer}\u201d a weight of {weight} when it produces \u201c{word}\u201d.",
    dict(layer=3, head=1, word="Hunde", answer="dogs", weight="0.71"),
    options=("Two", "dogs", "play", "in", "the", "snow", "."),
)


@dataclass
class Simulation:
    students: int
    recorded: int  # answers in the database for the question (the flooding device's included)
    flood_votes: int  # the flooding device's rows: one
    answer_to_count_s: list[float] = field(default_factory=list)  # per answer
    reveal_to_phone_s: list[float] = field(default_factory=list)  # per student
    refused: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0


def student(store: RoomStore, code: str, device: str, answer_at: float, poll_s: float, out: dict[str, float]) -> None:
    """One phone: polls the room as the page's fragment does (room, question, own answer), answers once at
    `answer_at`, and stops when it sees the reveal."""
    rng = random.Random(device)
    time.sleep(rng.uniform(0, poll_s))  # phones poll out of phase
    store.join(code, device)
    answered = False
    while True:
        room = store.room(code)
        store.exercise(code, room.current)
        store.my_answer(code, device, room.current)
        if room.revealed:
            store.progress(code, room.current)  # the phone shows the share that was right
            out["seen_reveal"] = time.perf_counter()
            return
        now = time.perf_counter()
        if not answered and now >= answer_at:
            try:
                store.answer(code, device, room.current, rng.choice(QUESTION.options))
                out["answered"] = time.perf_counter()
            except RoomError:
                out["refused"] = 1.0
            answered = True
            continue
        time.sleep(poll_s if answered or answer_at - now > poll_s else max(0.0, answer_at - now))


def flood(store: RoomStore, code: str, stop: threading.Event) -> None:
    i = 0
    while not stop.is_set():
        try:
            store.answer(code, "flooding-device", 0, QUESTION.options[i % 2])
        except RoomError:
            return  # revealed: answers are closed
        i += 1
        time.sleep(1 / FLOOD_PER_S)


@dataclass
class Crowd:
    """Simulated phones running in threads, and the flooding device."""

    threads: list[threading.Thread]
    results: list[dict[str, float]]  # per student: "answered", "refused", "seen_reveal" (perf_counter times)
    flooding: threading.Event
    flooder: threading.Thread

    def stop_flood(self) -> None:
        self.flooding.set()
        self.flooder.join()


def start_crowd(
    stores: Sequence[RoomStore], code: str, students: int, start: float, window_s: float, poll_s: float
) -> Crowd:
    """`students` simulated phones spread over `stores` (one per app server), each answering once at a random
    time within `window_s` after `start` (a perf_counter time), and the flooding device on the first store."""
    results: list[dict[str, float]] = [{} for _ in range(students)]
    threads = [
        threading.Thread(
            target=student,
            args=(
                stores[i % len(stores)],
                code,
                f"student-{i:04d}",
                start + random.Random(i).uniform(0, window_s),
                poll_s,
                results[i],
            ),
            daemon=True,
        )
        for i in range(students)
    ]
    flooding = threading.Event()
    flooder = threading.Thread(target=flood, args=(stores[0], code, flooding), daemon=True)
    for thread in [*threads, flooder]:
        thread.start()
    return Crowd(threads, results, flooding, flooder)


def simulate(students: int, window_s: float, url: str, poll_s: float = POLL_S, servers: int = 1) -> Simulation:
    """`students` phones answering within `window_s` seconds on the database at `url`. With `servers` > 1 the
    phones are spread over that many engines (connection pools, as app servers behind a load balancer have), the
    presenter on the first: every answer must still be counted once."""
    engines = [schema.make_engine(url) for _ in range(servers)]
    engine, store = engines[0], RoomStore(engines[0])
    stores = [RoomStore(e) for e in engines]
    room, token = store.open_room("benchmark", "Two dogs play in the snow.", [QUESTION])
    cpu0, wall0 = time.process_time(), time.perf_counter()
    start = wall0 + poll_s
    crowd = start_crowd(stores, room.code, students, start, window_s, poll_s)
    results = crowd.results
    # The presenter's panel: the count, every poll_s, until every student has answered.
    seen: list[tuple[float, int]] = []
    while True:
        progress = store.progress(room.code, 0)
        seen.append((time.perf_counter(), progress.tally.answered))
        if sum("answered" in r or "refused" in r for r in results) == students and progress.tally.answered >= students:
            break
        if time.perf_counter() - start > window_s + 60:
            break  # something is stuck: report what was recorded
        time.sleep(poll_s)
    crowd.stop_flood()
    revealed_at = time.perf_counter()
    store.reveal(room.code, token)
    for thread in crowd.threads:
        thread.join(timeout=60)
    final = store.progress(room.code, 0).tally.answered
    with engine.connect() as db:
        flood_votes = db.execute(  # this room's rows of the flooding device (the database may hold other rooms)
            schema.answers.select()
            .join(schema.questions, schema.questions.c.id == schema.answers.c.question_id)
            .where(schema.questions.c.room_code == room.code, schema.answers.c.device == "flooding-device")
        ).all()
    # An answer appears in the count at the first presenter poll that counts at least as many answers as were
    # recorded up to and including it (the count only grows).
    answered = sorted(r["answered"] for r in results if "answered" in r)
    to_count = [
        next((at - t for at, n in seen if n >= k + 1 and at >= t), float("nan")) for k, t in enumerate(answered)
    ]
    simulation = Simulation(
        students,
        final,
        len(flood_votes),
        to_count,
        [r["seen_reveal"] - revealed_at for r in results if "seen_reveal" in r],
        sum("refused" in r for r in results),
        time.process_time() - cpu0,
        time.perf_counter() - wall0,
    )
    for each in engines:
        each.dispose()
    return simulation


def _peak_rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    students, window = (20, 2.0) if opts.quick else (200, 10.0)
    configured = os.environ.get(schema.DATABASE_ENV, "").strip()
    with tempfile.TemporaryDirectory(prefix="explorer-room-") as folder:
        url = configured or f"sqlite:///{Path(folder) / 'rooms.sqlite'}"
        sim = simulate(students, window, url)
        two = simulate(students, window, url, servers=2)  # two app servers (engines) on the same database
    database = url.split(":", 1)[0]
    # The flooding device's one vote is counted with the students'.
    result.add(
        "answers recorded",
        f"{sim.recorded - sim.flood_votes}/{students}",
        f"all {students}",
        sim.recorded - sim.flood_votes == students,
    )
    result.add(
        "two servers on one database: answers recorded",
        f"{two.recorded - two.flood_votes}/{students}",
        f"all {students}",
        two.recorded - two.flood_votes == students and two.flood_votes == 1,
    )
    result.add("flooding device (100 answers/s): votes kept", str(sim.flood_votes), "1", sim.flood_votes == 1)
    p95_count = percentile(sim.answer_to_count_s, 95)
    result.add("p95 answer \u2192 presenter's count", f"{p95_count:.2f} s", f"\u2264 {GOAL_S:g} s", p95_count <= GOAL_S)
    p95_follow = percentile(sim.reveal_to_phone_s, 95)
    followed = len(sim.reveal_to_phone_s)
    result.add(
        "p95 reveal \u2192 phone shows it",
        f"{p95_follow:.2f} s ({followed}/{students} phones)",
        f"\u2264 {GOAL_S:g} s",
        p95_follow <= GOAL_S and followed == students,
    )
    result.add(
        "CPU (this process)",
        f"{sim.cpu_s:.1f} s over {sim.wall_s:.1f} s ({100 * sim.cpu_s / sim.wall_s:.0f}% of one core)",
    )
    result.add("peak memory (this process)", f"{_peak_rss_mb():.0f} MB")
    result.note(f"{students} students within {window:g} s on {database}, every phone polling every {POLL_S:g} s")
    if not opts.quick:  # real phones beside the simulated students: app servers and Chromium, minutes
        from benchmarks import room_browsers

        with tempfile.TemporaryDirectory(prefix="explorer-room-browsers-") as folder:
            try:
                room_browsers.run(result, PHONES, students, window, Path(folder))
            except Exception as error:  # the simulated room's rows stand without the phones'
                result.note(f"real phones: failed ({type(error).__name__}: {str(error)[:200]})")
    return result
