"""A lecture's load: the lecturer clicks on the projector while a class uses the same server.

`python -m benchmarks.classroom --students 40 --browsers 8` starts the app as users start it, measures the
lecturer's clicks in Chromium on the idle server (the browser benchmark's detector: from the click to the
changed figure drawn), then lets the class in and measures the same clicks again while the class works:

- `browsers` students are real Chromium pages (one headless browser, a context each, a 390x844 phone
  viewport), each clicking its page's own control every `think` seconds (jittered);
- the others speak Streamlit's own protocol over the same websocket a browser uses (`/_stcore/stream`):
  each opens its page with its query string and asks for a rerun every `think` seconds. A rerun runs the
  whole page script, as a full-page click does, so these students cost the server at least what a browser's
  click on a fragment would; they draw nothing, which keeps the machine's two cores for the server and the
  lecturer instead of for forty renderers that in a hall run on the students' phones.

With `--class-server` the class works on a second server, as `python app.py --class-port PORT` starts it for a
lecture, and the lecturer alone on the first: the two processes share the machine's cores but not an interpreter.

The students spread over the pages a class has open in a lecture (translate, heads, tour, compare). Reported:
the lecturer's p50 and p95 per click, idle and with the class, and their ratio (the goal: p95 with the class
within 2x of idle); the students' reruns (count, p50, p95 from request to the script's end); the server's CPU
(cores busy) and resident memory.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from benchmarks.browser_pages import (
    Interaction,
    Session,
    Settings,
    browser_helpers,
    cpu_seconds,
    interactions,
    rss_mib,
)
from benchmarks.common import SHIPPED_CHECKPOINT, Options, Result, percentile
from benchmarks.report import load_average

LECTURER_CLICKS = ("Translate: head", "Heads: a head off / on", "Tour: Next")
CLASS_PAGES = ("translate", "heads", "tour", "compare")
# What a browser student clicks on its page: a control whose every click reruns the page's work.
STUDENT_CLICKS = {
    "translate": '.st-key-head button[role="radio"]:not([disabled])',  # the chosen option is disabled
    "heads": ".st-key-hm_cross_0_0 label",
    # Next while there is one; on the last stop Next is disabled and the student steps back
    "tour": ".st-key-tour_next button:not([disabled]), .st-key-tour_prev button:not([disabled])",
    "compare": '.st-key-c_h0 button[role="radio"]:not([disabled])',
}
PHONE = {"width": 390, "height": 844}


@dataclass
class ClassSettings:
    students: int = 40
    browsers: int = 8  # of the students, how many are real Chromium pages
    think_s: float = 20.0  # mean seconds between one student's clicks
    runs: int = 5  # lecturer clicks per interaction, idle and with the class each
    warm_s: float = 30.0  # the class works this long before the lecturer's loaded clicks
    clicks: Sequence[str] = LECTURER_CLICKS
    checkpoint: Path = SHIPPED_CHECKPOINT
    log_dir: Path = field(default_factory=lambda: Path("/tmp/classroom-bench"))
    # The class on a server of its own (`python app.py --class-port`), the lecturer alone on the first.
    class_server: bool = False
    timeout_s: float = 120.0


@dataclass
class ClassLog:
    """What the class did: seconds per rerun (protocol students), clicks made and failed (browser students)."""

    reruns: list[float] = field(default_factory=list)
    joined: int = 0
    browser_clicks: int = 0
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


# ---- the students ------------------------------------------------------------------------------------------
def _student_query(settings: ClassSettings, language: str) -> str:
    return urlencode({"lang": language, "model": settings.checkpoint.name})


async def _rerun(ws: Any, page: str, query: str) -> float:
    """Ask for one run of `page` and wait for its end: seconds from the request to `script_finished`."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    message = BackMsg()
    message.rerun_script.query_string = query
    message.rerun_script.page_name = page
    started = time.perf_counter()
    await ws.send(message.SerializeToString())
    while True:
        forward = ForwardMsg()
        forward.ParseFromString(await ws.recv())
        if forward.WhichOneof("type") == "script_finished":
            return time.perf_counter() - started


async def _protocol_student(url: str, page: str, query: str, think_s: float, log: ClassLog, rng: random.Random) -> None:
    import websockets  # Streamlit's own requirement: its server speaks it
    from websockets.typing import Origin, Subprotocol

    ws_url = url.replace("http://", "ws://", 1) + "/_stcore/stream"
    protocols = [Subprotocol("streamlit")]
    async with websockets.connect(ws_url, subprotocols=protocols, origin=Origin(url), max_size=None) as ws:
        await _rerun(ws, page, query)
        log.joined += 1
        while not log.stop.is_set():
            await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))
            if not log.stop.is_set():
                log.reruns.append(await _rerun(ws, page, query))


async def _browser_student(
    browser: Any, url: str, page_name: str, query: str, think_s: float, log: ClassLog, rng: random.Random
) -> None:
    context = await browser.new_context(viewport=PHONE)
    page = await context.new_page()
    try:
        await page.goto(f"{url}/{page_name}?{query}", wait_until="commit")
        await page.locator(STUDENT_CLICKS[page_name]).first.wait_for(timeout=120_000)
        log.joined += 1
        while not log.stop.is_set():
            await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))
            if log.stop.is_set():
                break
            controls = page.locator(STUDENT_CLICKS[page_name])
            try:
                control = controls.nth(log.browser_clicks % max(await controls.count(), 1))
                await _reach(page, control)
                await control.click(timeout=30_000)
                log.browser_clicks += 1
            except Exception as error:  # noqa: BLE001 - playwright's TimeoutError: counted, and the student goes on
                log.failures.append(f"{page_name}: {type(error).__name__}: {error}"[:200])
    finally:
        await context.close()


async def _reach(page: Any, control: Any) -> None:
    """Open the sidebar first if `control` is in it: on a phone it starts closed (Compare's head pickers).

    A control that is not on the page yet (mid-rerun) is left to the click's own wait: the short timeout
    keeps this look from spending the click's budget.
    """
    try:
        box = await control.bounding_box(timeout=2_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: nothing to open
        return
    opener = page.locator('[data-testid="stExpandSidebarButton"]')
    if box is not None and box["x"] < 0 and await opener.count():
        await opener.first.click()


async def _the_class(url: str, settings: ClassSettings, log: ClassLog) -> None:
    from playwright.async_api import async_playwright

    helpers = browser_helpers()
    rng = random.Random(0)
    languages = ("en", "ko")
    async with async_playwright() as playwright:
        browser = None
        if settings.browsers:
            browser = await playwright.chromium.launch(
                executable_path=helpers.chromium_path(), args=helpers.CHROMIUM_ARGS, headless=True
            )
        tasks = []
        for student in range(settings.students):
            page = CLASS_PAGES[student % len(CLASS_PAGES)]
            query = _student_query(settings, languages[student % 2])
            student_rng = random.Random(rng.random())
            if student < settings.browsers and browser is not None:
                job = _browser_student(browser, url, page, query, settings.think_s, log, student_rng)
            else:
                job = _protocol_student(url, page, query, settings.think_s, log, student_rng)
            tasks.append(asyncio.create_task(job))
            await asyncio.sleep(0.2)  # a class comes in over a few seconds, not in one instant
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException):
                log.failures.append(f"{type(outcome).__name__}: {outcome}"[:200])
        if browser is not None:
            await browser.close()


def start_class(url: str, settings: ClassSettings) -> tuple[ClassLog, threading.Thread]:
    """The class, on a thread of its own (its own event loop); `log.stop.set()` and join the thread to end it."""
    log = ClassLog()
    thread = threading.Thread(target=lambda: asyncio.run(_the_class(url, settings, log)), name="class", daemon=True)
    thread.start()
    return log, thread


# ---- the lecturer ------------------------------------------------------------------------------------------
@dataclass
class Click:
    name: str
    idle: list[float] = field(default_factory=list)
    loaded: list[float] = field(default_factory=list)

    def ratio_p95(self) -> float:
        return percentile(self.loaded, 95) / percentile(self.idle, 95) if self.idle and self.loaded else math.nan


def lecturer_clicks(
    session: Session,
    chosen: Sequence[Interaction],
    runs: int,
    into: Callable[[Click], list[float]],
    clicks: dict[str, Click],
) -> None:
    for action in chosen:
        session.visit(action.url_path)
        for run in range(min(runs, action.max_runs)):
            seconds, _ = session.interact(action, run)
            into(clicks[action.name]).append(seconds)


@dataclass
class Measured:
    clicks: list[Click]
    log: ClassLog
    cores_busy: float  # the lecturer's server's CPU seconds per wall second while the class worked
    class_cores: float | None  # the same for the students' server, when the class has its own
    rss_before: float
    rss_after: float
    load: str


def measure(settings: ClassSettings, log_line: Callable[[str], None] = print) -> Measured:
    from playwright.sync_api import sync_playwright

    helpers = browser_helpers()
    settings.log_dir.mkdir(parents=True, exist_ok=True)
    chosen = [a for a in interactions(0) if a.name in settings.clicks]
    clicks = {a.name: Click(a.name) for a in chosen}
    runs = settings.log_dir / "runs"
    server, app = helpers.start_server(
        settings.log_dir / "server.log", checkpoint_root=settings.checkpoint.parent, runs=runs
    )
    class_server, class_app = server, app
    try:
        if settings.class_server:  # as `python app.py --class-port` starts it: same app, same data folder
            class_server, class_app = helpers.start_server(
                settings.log_dir / "class-server.log", checkpoint_root=settings.checkpoint.parent, runs=runs
            )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=helpers.chromium_path(), args=helpers.CHROMIUM_ARGS, headless=True
            )
            lecture = Settings(runs=settings.runs, checkpoint=settings.checkpoint, timeout_s=settings.timeout_s)
            session = Session(browser, app, server.pid, "en", lecture)
            lecturer_clicks(session, chosen, 1, lambda c: [], clicks)  # warm every page once, untimed
            lecturer_clicks(session, chosen, settings.runs, lambda c: c.idle, clicks)
            log_line("idle: " + "; ".join(f"{c.name} p95 {percentile(c.idle, 95):.2f} s" for c in clicks.values()))
            rss_before = rss_mib(server.pid)
            cpu_before, wall_before = cpu_seconds(server.pid), time.monotonic()
            class_cpu_before = cpu_seconds(class_server.pid)
            log, thread = start_class(class_app.url, settings)
            deadline = time.monotonic() + settings.warm_s + 0.2 * settings.students + 120
            while log.joined < settings.students and time.monotonic() < deadline and thread.is_alive():
                time.sleep(1)
            log_line(f"class: {log.joined} of {settings.students} joined; working {settings.warm_s:.0f} s")
            time.sleep(settings.warm_s)
            lecturer_clicks(session, chosen, settings.runs, lambda c: c.loaded, clicks)
            wall = time.monotonic() - wall_before
            cores = (cpu_seconds(server.pid) - cpu_before) / wall
            class_cores = (cpu_seconds(class_server.pid) - class_cpu_before) / wall if settings.class_server else None
            rss_after = rss_mib(server.pid)
            log.stop.set()
            thread.join(timeout=120)
            session.close()
            browser.close()
    finally:
        helpers.stop_server(server)
        if class_server is not server:
            helpers.stop_server(class_server)
    return Measured(list(clicks.values()), log, cores, class_cores, rss_before, rss_after, load_average())


def _p(values: Sequence[float], q: float) -> str:
    return f"{percentile(values, q):.2f}" if values else "–"


def markdown_table(measured: Measured, settings: ClassSettings) -> str:
    where = "on a server of their own (`--class-port`)" if settings.class_server else "on the lecturer's server"
    lines = [
        f"Class: {settings.students} students {where} ({settings.browsers} in Chromium at 390x844, the rest over the "
        f"websocket), one click each every ~{settings.think_s:.0f} s, on {', '.join(CLASS_PAGES)}.",
        "",
        "| Lecturer's click | idle p50 (s) | idle p95 (s) | with the class p50 (s) | with the class p95 (s) | "
        "p95 ratio (goal ≤ 2) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in measured.clicks:
        lines.append(
            f"| {c.name} | {_p(c.idle, 50)} | {_p(c.idle, 95)} | {_p(c.loaded, 50)} | {_p(c.loaded, 95)} | "
            f"{c.ratio_p95():.2f} |"
        )
    log = measured.log
    lines += [
        "",
        f"Students joined: {log.joined} of {settings.students}; protocol reruns {len(log.reruns)} "
        f"(p50 {_p(log.reruns, 50)} s, p95 {_p(log.reruns, 95)} s); browser clicks {log.browser_clicks}; "
        f"failures {len(log.failures)}.",
        f"Lecturer's server: {measured.cores_busy:.2f} cores busy while the class worked"
        + (f" (the students' server: {measured.class_cores:.2f})" if measured.class_cores is not None else "")
        + f"; RSS {measured.rss_before:.0f} MiB "
        f"before the class, {measured.rss_after:.0f} MiB after. Load average at the end: {measured.load}.",
    ]
    return "\n".join(lines)


# ---- the suite's interface (`python -m benchmarks --only classroom`) ---------------------------------------
NAME = "classroom"
TITLE = "A lecture's load: the lecturer's clicks with a class on the same server"


def quick_class(settings: ClassSettings) -> ClassSettings:
    """`--quick`: a class of three (one in Chromium) and one click: that everything runs, in about a minute."""
    return replace(settings, students=3, browsers=1, think_s=2.0, warm_s=3.0, clicks=("Translate: head",))


def run(opts: Options) -> Result:
    settings = ClassSettings(runs=opts.n_rounds(5, quick=1), checkpoint=Path(opts.checkpoint))
    measured = measure(quick_class(settings) if opts.quick else settings)
    result = Result(NAME, TITLE)
    for c in measured.clicks:
        ratio = c.ratio_p95()
        result.add(
            f"{c.name}: p95 with {settings.students} students / idle",
            f"{_p(c.loaded, 95)} s / {_p(c.idle, 95)} s = {ratio:.2f}",
            goal="≤ 2",
            met=None if math.isnan(ratio) else ratio <= 2,
        )
    result.note(markdown_table(measured, settings))
    return result


def memory_setup(opts: Options, variant: str) -> Callable[[], None]:
    raise NotImplementedError("the classroom benchmark reports the server's memory itself")


def main(argv: list[str] | None = None) -> int:
    command = argparse.ArgumentParser(
        prog="python -m benchmarks.classroom", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    command.add_argument("--students", type=int, default=40)
    command.add_argument("--browsers", type=int, default=8, help="of the students, how many in Chromium")
    command.add_argument(
        "--think", dest="think_s", type=float, default=20.0, help="mean seconds between a student's clicks"
    )
    command.add_argument("--runs", type=int, default=5, help="lecturer clicks per interaction, idle and loaded")
    command.add_argument(
        "--warm", dest="warm_s", type=float, default=30.0, help="seconds the class works before the loaded clicks"
    )
    command.add_argument("--out", default=None, help="also write the markdown table to this file")
    command.add_argument(
        "--class-server", action="store_true", help="the class on a second server, as `python app.py --class-port`"
    )
    args = command.parse_args(argv)
    settings = ClassSettings(**{name: value for name, value in vars(args).items() if name != "out"})
    print(f"load average (1/5/15 min) at start: {load_average()}", flush=True)
    measured = measure(settings)
    table = markdown_table(measured, settings)
    print("\n" + table)
    if measured.log.failures:
        print("\nFailures:\n" + "\n".join(measured.log.failures[:10]))
    if args.out:
        Path(args.out).write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
