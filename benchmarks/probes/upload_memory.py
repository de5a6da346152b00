"""Server memory across corpus uploads: does the server give back what a session's upload took once the session
has gone?

    python -m benchmarks.probes.upload_memory [--sessions 20] [--pairs 20000] [--settle 150]

Starts the app as users do (`python app.py`, which runs `streamlit run`) and drives it with headless Chromium
(Playwright, /usr/bin/chromium). One session that uploads a corpus warms the server up: the libraries and code
the upload path loads once per process (SentencePiece, the page's time estimate, which builds the run's model
and times a few of its steps in the server, and torch's allocator pools). Then SESSIONS browser sessions in turn
each open the Train page, upload a TSV corpus of their own of PAIRS pairs, wait until its size and its
tokenizer are shown, and close. The server's resident memory (VmRSS of its process, sampled every 0.2 s) is
printed at launch (after one visit without an upload), at start (after the warm-up session), at its peak,
right after the last session closed, and after SETTLE seconds and one more short visit (Streamlit keeps a
closed session's state for a reconnect for `server.disconnectedSessionTTL`, 120 s by default, and drops it
when the next session comes). The check: the final figure within 100 MiB of the start.

A corpus above ui/train/data.py's LARGE_UPLOAD_BYTES (1 MiB: about 17,000 pairs here) is read, and its
vocabulary trained, outside the server (explorer/data/prepare.py); a smaller one inside it.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.probes import parser

if TYPE_CHECKING:
    from playwright.sync_api import Browser

PREPARE_ENV = "EXPLORER_PREPARE"  # explorer.data.prepare.ROOT_ENV, without importing the engine here

MIB = 1024 * 1024
TOLERANCE_MIB = 100
TIMEOUT_MS = 300_000


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Sampler:
    """The peak of a process's resident memory, sampled in a thread."""

    def __init__(self, pid: int, every_s: float = 0.2) -> None:
        self.pid, self.every_s, self.peak, self._stop = pid, every_s, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mib(self.pid))
            time.sleep(self.every_s)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def corpus(session: int, pairs: int) -> bytes:
    """A TSV corpus of its own for each session (different words, so nothing is shared between sessions)."""
    words = ("cat", "dog", "man", "child", "bird", "horse", "girl", "boy")
    lines = (
        f"the {words[i % 8]} {session} sleeps near house {i} .\tder {words[i % 8]} {session} schläft bei haus {i} .\n"
        for i in range(pairs)
    )
    return "".join(lines).encode("utf-8")


def visit(browser: Browser, url: str, upload: bytes | None) -> None:
    """One browser session on the Train page (optionally uploading `upload`), then closed."""
    from playwright.sync_api import FilePayload

    wait_idle = browser_helpers().wait_idle
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{url}/train?train_view=new", timeout=TIMEOUT_MS)
        wait_idle(page, TIMEOUT_MS)
        if upload is not None:
            page.get_by_text("Upload a corpus", exact=True).click()
            wait_idle(page, TIMEOUT_MS)
            tsv = page.get_by_text("Sentence pairs (TSV)", exact=True)
            for _ in range(5):  # a click that lands while the page reruns can be lost: until the TSV box shows
                page.get_by_text("One TSV file: source<TAB>target per line", exact=True).click()
                wait_idle(page, TIMEOUT_MS)
                if tsv.count():
                    break
            page.locator('[data-testid="stMain"] [data-testid="stFileUploaderDropzoneInput"]').set_input_files(
                files=[FilePayload(name="pairs.tsv", mimeType="text/tab-separated-values", buffer=upload)]
            )
            page.get_by_text("2 · Tokenizer", exact=True).wait_for(timeout=TIMEOUT_MS)
            page.get_by_text("pieces", exact=False).first.wait_for(timeout=TIMEOUT_MS)
            wait_idle(page, TIMEOUT_MS)
    finally:
        context.close()  # the tab closes: the server sees the session's connection end


def browser_helpers() -> Any:
    """tests/browser/helpers.py: how the browser tests start the app and wait for a page. Imported by name, so
    the type checker, which checks benchmarks/ but not the tests' untyped helpers, does not follow it."""
    return importlib.import_module("tests.browser.helpers")


def main(argv: list[str] | None = None) -> int:
    command = parser(__name__, __doc__)
    command.add_argument("--sessions", type=int, default=20, help="browser sessions, one after another (20)")
    command.add_argument("--pairs", type=int, default=20_000, help="sentence pairs per uploaded corpus (20000)")
    command.add_argument("--settle", type=float, default=150.0, help="seconds to wait after the last session (150)")
    args = command.parse_args(argv)

    from playwright.sync_api import sync_playwright

    helpers = browser_helpers()

    with tempfile.TemporaryDirectory(prefix="upload-memory-") as scratch:
        folder = Path(scratch)
        (folder / "runs").mkdir()
        os.environ[PREPARE_ENV] = str(folder / "prepare")  # no job of an earlier run is found done
        server, app = helpers.start_server(folder / "server.log", runs=folder / "runs")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=helpers.chromium_path(), args=helpers.CHROMIUM_ARGS, headless=True
                )
                visit(browser, app.url, None)
                time.sleep(2)
                launch = rss_mib(server.pid)
                visit(browser, app.url, corpus(0, args.pairs))
                time.sleep(2)
                start = rss_mib(server.pid)
                sampler = Sampler(server.pid)
                size = len(corpus(0, args.pairs)) / MIB
                print(f"server pid {server.pid}; each session uploads {args.pairs:,} pairs ({size:.1f} MiB)")
                for session in range(args.sessions):
                    began = time.monotonic()
                    visit(browser, app.url, corpus(session + 1, args.pairs))
                    print(
                        f"session {session + 1:2d}: {time.monotonic() - began:5.1f} s, "
                        f"server {rss_mib(server.pid):7.1f} MiB",
                        flush=True,
                    )
                time.sleep(2)
                closed = rss_mib(server.pid)
                time.sleep(args.settle)
                visit(browser, app.url, None)
                time.sleep(5)
                after = rss_mib(server.pid)
                peak = max(sampler.stop(), after)
                browser.close()
        finally:
            helpers.stop_server(server)
    back = after - start <= TOLERANCE_MIB
    print(f"RSS at launch (one visit) {launch:.1f} MiB; after the warm-up session with an upload {start:.1f} MiB")
    print(f"RSS start {start:.1f} MiB, peak {peak:.1f} MiB, right after the sessions closed {closed:.1f} MiB,")
    print(f"after {args.settle:.0f} s and one more visit {after:.1f} MiB ({after - start:+.1f} MiB)")
    print(f"returned to within {TOLERANCE_MIB} MiB of its start: {'yes' if back else 'no'}")
    return 0 if back else 1


if __name__ == "__main__":
    sys.exit(main())
