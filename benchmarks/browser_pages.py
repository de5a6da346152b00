"""Pages and clicks as a lecturer sees them: a real server (`python app.py`, as users start it) and Debian's Chromium
driven by Playwright, timed from the navigation or the click to the figure drawn with its data.

    python -m benchmarks.browser_pages                      # every page and interaction, English and Korean
    python -m benchmarks.browser_pages --runs 5 --out t.md  # 5 warm runs each; the markdown table to t.md
    python -m benchmarks.browser_pages --model random-6x8   # a 6-layer x 8-head random-weight stand-in
    python -m benchmarks.browser_pages --sentence-words 60  # every page on a 60-word sentence
    python -m benchmarks --only browser                     # the same through the suite (--rounds, --checkpoint)

Per language, one fresh server: the time from starting it to the start page's first figure, then every page's
first visit on that server and `--runs` warm visits (each a new page load, so a new browser session on warm
server caches), then every interaction `--runs` times. A script in the page (benchmarks/browser_watch.js) stamps
when each figure is first drawn and when its drawing changes, and when the click or key press happened, so the
times are the browser's own, not the polling's. The server's CPU time (user + system, from /proc) is read
before each visit or click and after its script has finished; its resident memory after.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.common import SHIPPED_CHECKPOINT, Options, Result, percentile
from benchmarks.report import load_average

WATCH_JS = (Path(__file__).with_name("browser_watch.js")).read_text(encoding="utf-8")
LANGUAGES = ("en", "ko")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# The element that says a page is ready, where it has no figure (Train's form).
MARKERS = {"train_start": ".st-key-train_start button"}


# The main figure of every page (ui/pages.py ALL_PAGES): the one on the first screen that the page is about, by
# the key prefix benchmarks/browser_watch.js names it with.
PAGE_FIGURES = {
    "tour": "tour_figure_",
    "translate": "translate_",
    "compare": "stVegaLiteChart#",  # Altair's linked heads: no key on the page
    "heads": "heads_remaining",
    "step_by_step": "sbs_",
    "beam": "beam_tree",
    "positional": "pe_heatmap",
    "complexity": "complexity_operations",
    "train": "train_start",
    "explain": "explain_values",
}


@dataclass(frozen=True)
class Interaction:
    """One lecturer's action on `url_path`, repeated: `act(page, run)` does run number `run` (0, 1, …) so that
    every run changes the figure `figure` (a key prefix)."""

    name: str
    url_path: str
    figure: str
    act: Callable[[Any, int], None]
    max_runs: int = 1000


def option(container: str, *indices: int) -> Callable[[Any, int], None]:
    """Click option `indices[run % len]` of a segmented control or radio keyed `container` (by position, so the
    same run works in every language); negative indices count from the end."""

    def act(page: Any, run: int) -> None:
        options = page.locator(f'.st-key-{container} :is(button[role="radio"], label[data-testid="stRadioOption"])')
        index = indices[run % len(indices)]
        options.nth(index if index >= 0 else options.count() + index).click()

    return act


def click(selector: str) -> Callable[[Any, int], None]:
    return lambda page, run: page.locator(selector).first.click()


def slider_step(container: str) -> Callable[[Any, int], None]:
    """One step left, then one right, … by the keyboard on a slider's thumb."""

    def act(page: Any, run: int) -> None:
        thumb = page.locator(f'.st-key-{container} :is([role="slider"], input[type="range"])').first
        thumb.focus()
        thumb.press("ArrowLeft" if run % 2 == 0 else "ArrowRight")

    return act


SENTENCES = (
    "A man in a red jacket is riding a bicycle down the hill.",
    "Two girls are reading books under a large tree.",
    "A dog jumps over a fence to catch a ball.",
    "An old woman is cooking soup in a small kitchen.",
    "Three boys play football on a muddy field.",
    "A musician plays the guitar on a busy street corner.",
    "Children are building a sandcastle on the beach.",
    "A waiter carries plates of food to a table.",
    "A cat sleeps on a sofa next to the window.",
    "People wait in line outside a bakery in the morning.",
)


def long_sentence(words: int, offset: int = 0) -> str:
    """`words` words from the sentences above, starting at sentence `offset` (different offsets, different text)."""
    pool = " ".join(SENTENCES[(offset + i) % len(SENTENCES)] for i in range(len(SENTENCES))).split()
    while len(pool) < words:
        pool += pool
    text = " ".join(pool[:words]).rstrip(".")
    return text + "."


def type_sentence(words: int) -> Callable[[Any, int], None]:
    """A new sentence every run (a cache miss: translation and every attention map computed)."""

    def act(page: Any, run: int) -> None:
        box = page.locator(".st-key-sentence input").first
        box.fill(long_sentence(words, run + 1) if words else SENTENCES[run % len(SENTENCES)])
        box.press("Enter")

    return act


def interactions(sentence_words: int) -> list[Interaction]:
    return [
        Interaction("Translate: head", "translate", "translate_", option("head", 1, 0)),
        Interaction("Translate: layer", "translate", "translate_", option("layer", 0, -1)),
        Interaction("Translate: family", "translate", "translate_", option("family", 0, -1)),
        Interaction("Translate: view (one head / mean)", "translate", "translate_", option("mode", 2, 0)),
        Interaction("Translate: a new sentence", "translate", "translate_", type_sentence(sentence_words)),
        Interaction("Tour: Next", "tour", "tour_", click(".st-key-tour_next button"), max_runs=9),
        Interaction("Beam: one step", "beam", "beam_tree", slider_step("beam_step")),
        Interaction("Heads: a head off / on", "heads", "heads_remaining", click(".st-key-hm_cross_2_1 label")),
        Interaction("Compare: a panel's head", "compare", "stVegaLiteChart#", option("c_h0", 1, 0)),
    ]


# Where a page reads its sentence from the URL (ui/attention_controls.py sentence_input and the tour's box).
SENTENCE_PARAMS = ("sentence", "c_sentence", "h_sentence", "sbs_sentence", "beam_sentence", "pe_sentence")


@dataclass
class Settings:
    runs: int = 3
    languages: Sequence[str] = LANGUAGES
    pages: Sequence[str] | None = None  # url paths; None: every page
    interactions: Sequence[str] | None = None  # names; None: all; () none
    checkpoint: Path = SHIPPED_CHECKPOINT
    sentence_words: int = 0  # 0: each page's own example sentence
    timeout_s: float = 120.0  # for one figure to appear (a failure, not a slow figure)
    log_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="browser-bench-")))


@dataclass
class Measured:
    """One row: the first run's seconds, then seconds and server CPU seconds per further run, RSS after, MiB."""

    what: str
    language: str
    first: float = math.nan
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mib: float = math.nan
    figure: str = ""  # the key of the figure last seen drawn for this row (what the detector saw)

    def add(self, seconds: float, cpu: float) -> None:
        self.seconds.append(seconds)
        self.cpu.append(cpu)


# ---- the server process ------------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


def browser_helpers() -> ModuleType:
    """The browser tests' helpers (tests/browser/helpers.py): the server started as users start it, on a free port,
    and Chromium's path and flags. Imported by name: they are test code, outside mypy's files."""
    return importlib.import_module("tests.browser.helpers")


# ---- the browser -------------------------------------------------------------------------------------------
FIGURE_SINCE = """([prefix, since]) => { for (const [key, f] of Object.entries(window.__bench?.figures || {}))
    if (key.startsWith(prefix) && f.changed > since) return [f.changed, key]; return null; }"""
SETTLED = """(since) => { const b = window.__bench; return !!b && !b.running && b.idleAt !== null && b.idleAt > since &&
    performance.now() - b.idleAt > 400 || null; }"""


def wait_figure(page: Any, prefix: str, since: float, timeout_ms: float) -> tuple[float, str]:
    """performance.now() (ms) at which a figure keyed `prefix…` was drawn or changed after `since`, and its key."""
    found = page.wait_for_function(FIGURE_SINCE, arg=[prefix, since], timeout=timeout_ms, polling=50).json_value()
    return float(found[0]), str(found[1])


def settle(page: Any, since: float) -> None:
    """Until the script run started after `since` has finished (for the server's CPU time); a run that ends too
    fast for a frame to see it running counts as settled after 2 s."""
    try:
        page.wait_for_function(SETTLED, arg=since, timeout=2_000, polling=100)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: no running state was seen
        if page.evaluate("() => window.__bench.running"):
            page.wait_for_function("() => !window.__bench.running", polling=100)


class Session:
    """One server (its pid for CPU and memory) and one browser, on one checkpoint, in one language."""

    def __init__(self, browser: Any, app: Any, pid: int, language: str, settings: Settings) -> None:
        self.app, self.pid, self.language, self.timeout_ms = app, pid, language, settings.timeout_s * 1000
        self.seen = ""  # the key of the figure the last visit or click waited for
        model, sentence_words = settings.checkpoint.name, settings.sentence_words
        self.query = {"lang": language, "model": model}
        if sentence_words:
            self.query |= {name: long_sentence(sentence_words) for name in SENTENCE_PARAMS}
            self.query["tour_sentence"] = long_sentence(sentence_words)
        self.context = browser.new_context(viewport={"width": 1600, "height": 1000})
        self.context.set_default_timeout(self.timeout_ms)
        self.context.add_init_script(f"window.__benchMarkers = {MARKERS!r};\n{WATCH_JS}")
        self.page = self.context.new_page()

    def url(self, url_path: str) -> str:
        from urllib.parse import urlencode

        return f"{self.app.url}/{url_path}?{urlencode(self.query)}"

    def visit(self, url_path: str) -> tuple[float, float, float]:
        """Open the page: (seconds from navigation to its figure, epoch seconds of the figure, server CPU s)."""
        before = cpu_seconds(self.pid)
        self.page.goto(self.url(url_path), wait_until="commit")
        drawn, self.seen = wait_figure(self.page, PAGE_FIGURES[url_path], -1.0, self.timeout_ms)
        origin = float(self.page.evaluate("performance.timeOrigin"))
        settle(self.page, 0.0)
        return drawn / 1000, (origin + drawn) / 1000, cpu_seconds(self.pid) - before

    def interact(self, action: Interaction, run: int) -> tuple[float, float]:
        """Run `run` of `action`: (seconds from the click to the changed figure, server CPU s)."""
        self.page.evaluate("() => { window.__bench.input = null; }")
        before = cpu_seconds(self.pid)
        action.act(self.page, run)
        clicked = self.page.wait_for_function("() => window.__bench.input", polling=20).json_value()
        drawn, self.seen = wait_figure(self.page, action.figure, float(clicked), self.timeout_ms)
        settle(self.page, float(clicked))
        return (drawn - float(clicked)) / 1000, cpu_seconds(self.pid) - before

    def close(self) -> None:
        self.context.close()


def measure_language(browser: Any, settings: Settings, language: str, log: Callable[[str], None]) -> list[Measured]:
    """A fresh server: start-up to the first figure, every page (first and warm), every interaction."""
    from ui.pages import PAGES

    helpers = browser_helpers()

    rows: list[Measured] = []
    root = settings.checkpoint.parent
    started = time.time()
    server, app = helpers.start_server(
        settings.log_dir / f"server-{language}.log", checkpoint_root=root, runs=settings.log_dir / f"runs-{language}"
    )
    try:
        session = Session(browser, app, server.pid, language, settings)
        pages = [spec.url_path for spec in PAGES if settings.pages is None or spec.url_path in settings.pages]
        # The first visit of the first page (the start page, unless left out) times the start-up as well.
        first_seconds, figure_at, cpu = session.visit(pages[0])
        start_row = Measured(f"`python app.py` → {pages[0]}'s figure", language, first=figure_at - started)
        start_row.add(figure_at - started, cpu)
        start_row.rss_mib, start_row.figure = rss_mib(server.pid), session.seen
        rows.append(start_row)
        log(f"  [{language}] server start → first figure: {start_row.first:.2f} s")
        for index, url_path in enumerate(pages):
            row = Measured(f"page {url_path} → figure", language)
            row.first = first_seconds if index == 0 else session.visit(url_path)[0]
            for _ in range(settings.runs):
                seconds, _, cpu = session.visit(url_path)
                row.add(seconds, cpu)
            row.rss_mib, row.figure = rss_mib(server.pid), session.seen
            rows.append(row)
            log(f"  [{language}] {row.what}: first {row.first:.2f} s, warm " + _times(row.seconds, row.cpu))
        for action in interactions(settings.sentence_words):
            if settings.interactions is not None and action.name not in settings.interactions:
                continue
            if settings.pages is not None and action.url_path not in settings.pages:
                continue
            row = Measured(action.name, language)
            session.visit(action.url_path)
            for run in range(min(settings.runs, action.max_runs)):
                seconds, cpu = session.interact(action, run)
                row.add(seconds, cpu)
            row.first, row.rss_mib, row.figure = row.seconds[0], rss_mib(server.pid), session.seen
            rows.append(row)
            log(f"  [{language}] {row.what}: " + _times(row.seconds, row.cpu) + f", RSS {row.rss_mib:.0f} MiB")
        session.close()
    finally:
        helpers.stop_server(server)
    return rows


def measure(settings: Settings, log: Callable[[str], None] = print) -> list[Measured]:
    from playwright.sync_api import sync_playwright

    helpers = browser_helpers()
    executable = helpers.chromium_path()
    if executable is None:
        raise RuntimeError("Chromium not found: apt-get install chromium")
    rows: list[Measured] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=helpers.CHROMIUM_ARGS, headless=True)
        try:
            for language in settings.languages:
                rows += measure_language(browser, settings, language, log)
        finally:
            browser.close()
    return rows


# ---- the table ---------------------------------------------------------------------------------------------
def _times(seconds: Sequence[float], cpu: Sequence[float] = ()) -> str:
    text = f"p50 {percentile(seconds, 50):.2f} s, p95 {percentile(seconds, 95):.2f} s (n={len(seconds)})"
    return text + (f", server CPU {statistics.median(cpu):.2f} s" if cpu else "")


def _s(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.2f}"


def markdown_table(rows: Sequence[Measured]) -> str:
    lines = [
        "| What | Lang | First (s) | p50 (s) | p95 (s) | n | Server CPU per run, median (s) | Server RSS (MiB) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cpu = statistics.median(row.cpu) if row.cpu else math.nan
        lines.append(
            f"| {row.what} | {row.language} | {_s(row.first)} | {_s(percentile(row.seconds, 50))} | "
            f"{_s(percentile(row.seconds, 95))} | {len(row.seconds)} | {_s(cpu)} | {row.rss_mib:.0f} |"
        )
    return "\n".join(lines)


# ---- the suite's interface (`python -m benchmarks --only browser`) -----------------------------------------
NAME = "browser"
TITLE = "Pages and clicks in a browser (Chromium, python app.py)"


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    settings = Settings(runs=opts.n_rounds(3, quick=1), checkpoint=Path(opts.checkpoint))
    if opts.quick:
        settings = replace(settings, languages=("en",), pages=("translate",), interactions=("Translate: head",))
    load_before = load_average()
    rows = measure(settings)
    for row in rows:
        result.add(f"{row.what} ({row.language})", f"first {_s(row.first)} s, " + _times(row.seconds))
    result.note(f"load average (1/5/15 min) {load_before} before, {load_average()} after")
    print(markdown_table(rows), flush=True)
    return result


def memory_setup(opts: Options, variant: str) -> Callable[[], None]:
    raise NotImplementedError("the browser benchmark reports the server's memory itself")


def main(argv: list[str] | None = None) -> int:
    command = argparse.ArgumentParser(prog="python -m benchmarks.browser_pages", description=__doc__)
    command.add_argument("--runs", type=int, default=3, help="warm visits and clicks per row (default 3)")
    command.add_argument("--languages", nargs="+", choices=LANGUAGES, default=list(LANGUAGES))
    command.add_argument("--pages", nargs="+", default=None, help="url paths (default: every page)")
    command.add_argument("--interactions", nargs="*", default=None, help="interaction names (default: all)")
    command.add_argument(
        "--model",
        default=str(SHIPPED_CHECKPOINT),
        help="checkpoint folder, or 'random-6x8' for a 6-layer x 8-head random-weight stand-in",
    )
    command.add_argument("--sentence-words", type=int, default=0, help="every page on a sentence of this many words")
    command.add_argument("--out", default=None, help="also write the markdown table to this file")
    args = command.parse_args(argv)
    checkpoint = Path(args.model)
    if args.model == "random-6x8":
        from benchmarks.random_checkpoint import random_checkpoint

        checkpoint = random_checkpoint(Path(tempfile.mkdtemp(prefix="browser-bench-model-")) / "random-6x8")
    settings = Settings(
        runs=args.runs,
        languages=args.languages,
        pages=args.pages,
        interactions=args.interactions,
        checkpoint=checkpoint,
        sentence_words=args.sentence_words,
    )
    load_before = load_average()
    print(f"load average (1/5/15 min) at start: {load_before}; logs in {settings.log_dir}", flush=True)
    rows = measure(settings)
    table = markdown_table(rows)
    footer = f"\nLoad average (1/5/15 min): {load_before} at start, {load_average()} at end."
    print("\n" + table + footer)
    if args.out:
        Path(args.out).write_text(table + "\n" + footer + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
