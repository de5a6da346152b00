"""What the browser tests share: starting the app as users do (`python app.py`) on a free port, waiting for a
Streamlit page to settle, and measuring a page the way a projector sees it (where the first figure starts,
what is wider than the window, which requests leave the machine).

Used by the browser tests' shared fixtures (tests/browser/conftest.py) and docs/screenshots/take.py.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# What users run (README): app.py hands over to `streamlit run main_script/frame.py` in the same process.
SERVER_COMMAND = (sys.executable, str(REPO / "app.py"))
APP_SCRIPT = REPO / "main_script" / "frame.py"  # what SERVER_COMMAND serves; other scripts run by `streamlit run`
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RENDER_TIMEOUT_MS = 120_000
# What counts as a page's figure: plotly, Vega-Lite (Altair), and images drawn by the app.
# A figure: a chart, an image, or a matrix drawn as a table of coloured numbers (explorer/figures/matrix_table.py).
FIGURE_SELECTOR = (
    '[data-testid="stMain"] :is([data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], '
    '[data-testid="stImage"], [data-testid="stGraphVizChart"], figure.ae-matrix)'
)


@dataclass
class App:
    url: str
    checkpoint_root: Path | None


def chromium_path() -> str | None:
    return CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


# The server of the checks that train or read training runs (tests/browser/conftest.py `Servers.train_run`).
TRAIN_RUN = "train-run"


def query(**params: str) -> str:
    return urllib.parse.urlencode(params)


# --- waiting for Streamlit ---------------------------------------------------------------------------------------


# Idle, as the page shows it: the app's script state (Streamlit sets `data-test-script-state` on stApp, the
# signal its own browser tests wait on) is "notRunning" and nothing is drawn as pending (a skeleton), for `quiet`
# ms in a row. A page whose fragment polls (a room's, every second) may never be quiet that long on a busy machine:
# after 3 s of waiting, a moment with no run is enough. Tracked in the page, polled every 100 ms. (The "Running…"
# status widget is no signal: Streamlit shows it only once a run has taken 500 ms, and not in every layout.)
IDLE_JS = """(quiet) => {
    const app = document.querySelector('[data-testid="stApp"]');
    const stopped = app !== null && app.dataset.testScriptState === 'notRunning'
        && document.querySelector('[data-testid="stSkeleton"]') === null;
    const now = performance.now();
    const w = window;
    w.__idleWaitStart = w.__idleWaitStart ?? now;
    w.__idleStopped = stopped ? (w.__idleStopped ?? now) : null;
    return stopped && (now - w.__idleStopped >= quiet || now - w.__idleWaitStart >= 3000);
}"""


def wait_idle(page, timeout_ms: int = RENDER_TIMEOUT_MS, quiet_ms: int = 500) -> None:
    """Wait until the page shows content and its script has stopped running for `quiet_ms` in a row (`IDLE_JS`)."""
    # Style and script elements come first and take no height: wait for one that shows.
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll(
        '[data-testid="stMain"] [data-testid="stElementContainer"]')).some(e => e.offsetHeight > 0)""",
        timeout=timeout_ms,
    )
    page.evaluate("() => { window.__idleStopped = null; window.__idleWaitStart = null; }")  # this wait's own count
    try:
        page.wait_for_function(IDLE_JS, arg=quiet_ms, polling=100, timeout=timeout_ms)
    except Exception as error:  # noqa: BLE001 - playwright's TimeoutError, said as what it means here
        raise AssertionError(f"the app was still running after {timeout_ms / 1000:.0f} s") from error


def assert_no_exception(page) -> None:
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, f"the page shows an exception: {errors.first.inner_text()[:2000]}"


# --- measuring a page ---------------------------------------------------------------------------------------------


@contextmanager
def opened(browser, url: str, size: tuple[int, int] = (1024, 768), theme: str = "light") -> Iterator:
    """`url` in a new browser context of `size` in `theme`, waited for until the page has run without an exception."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=theme)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(url)
        wait_idle(page)
        assert_no_exception(page)
        yield page
    finally:
        context.close()


def first_figure_box(page) -> dict | None:
    """The first figure's box in the main area, in viewport pixels with the page scrolled to the top
    ({x, y, width, height}), or None when the page shows no figure."""
    page.evaluate("""() => document.querySelectorAll('[data-testid="stMain"], section.main, html')
                               .forEach(e => e.scrollTo(0, 0))""")
    figure = page.locator(FIGURE_SELECTOR).first
    if figure.count() == 0:
        return None
    return figure.bounding_box()


# The first figure drawn: a plotly figure once its SVG is laid out within its container (plotly sizes itself
# after it is attached), any other kind once it has a box.
FIRST_FIGURE_DRAWN_JS = """(selector) => {
    const figure = document.querySelector(selector);
    if (figure === null || figure.getBoundingClientRect().width === 0) return false;
    const plot = figure.querySelector('.js-plotly-plot');
    if (plot === null) return figure.getAttribute('data-testid') !== 'stPlotlyChart';
    const svg = plot.querySelector('.main-svg');
    return svg !== null && svg.getBoundingClientRect().width > 0
        && svg.getBoundingClientRect().width <= plot.getBoundingClientRect().width + 1;
}"""
# Two animation frames (the one that paints what is laid out now), at most 200 ms: a tab in the background gets none.
NEXT_FRAMES_JS = """() => new Promise(done => {
    requestAnimationFrame(() => requestAnimationFrame(done));
    setTimeout(done, 200);
})"""


def wait_for_figure(page, timeout_ms: int = RENDER_TIMEOUT_MS) -> None:
    page.locator(FIGURE_SELECTOR).first.wait_for(state="visible", timeout=timeout_ms)
    page.wait_for_function(FIRST_FIGURE_DRAWN_JS, arg=FIGURE_SELECTOR, polling=100, timeout=timeout_ms)
    page.evaluate(NEXT_FRAMES_JS)  # the frame that paints it


# Figures Chromium does not render (in a closed expander: `content-visibility: hidden`) keep their box but get
# no resize event until they are shown, so only rendered ones are waited for (`checkVisibility`).
PLOTS_FIT_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot'))
    .filter(p => p.getBoundingClientRect().width > 0 && p.checkVisibility())
    .every(p => Array.from(p.querySelectorAll('.main-svg'))
        .every(svg => svg.getBoundingClientRect().width <= p.getBoundingClientRect().width + 1))"""


def wait_for_relayout(page, settle_ms: int = 300, timeout_ms: int = 15_000) -> None:
    """After a resize: wait `settle_ms`, then until every plotly figure in the main area is drawn at its
    container's width again (plotly re-lays out on the resize event, later on a busy machine: a fixed wait
    once measured a figure still at the old width). Gives up quietly after `timeout_ms`: the checks that
    follow then report what is wrong."""
    page.wait_for_timeout(settle_ms)
    try:
        page.wait_for_function(PLOTS_FIT_JS, timeout=timeout_ms, polling=200)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError; the measurements below say what is wrong
        return
    page.evaluate(NEXT_FRAMES_JS)  # the frame after the last relayout


SCREENSHOTS = REPO / "test-artifacts" / "screenshots"


def full_screenshot(page, name: str, width: int = 1600) -> None:
    """A screenshot of the whole page, `width` px wide, to test-artifacts/screenshots/<name>.png. Streamlit
    scrolls inside its main container, not the document, so the viewport is grown to the content's height
    first; the caller sets the size it wants back."""
    height = page.evaluate(
        """() => Math.max(document.body.scrollHeight, ...Array.from(document.querySelectorAll(
               '[data-testid="stMain"], [data-testid="stAppViewContainer"], section.main'))
               .map(e => e.scrollHeight))"""
    )
    page.set_viewport_size({"width": width, "height": int(min(max(height + 40, 1000), 16000))})
    wait_for_relayout(page)  # plotly re-lays out after a resize
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def overflowing(page) -> list[str]:
    """What is wider than the window: the document itself, or any visible element whose right edge passes
    the window's (an element inside a container that scrolls sideways on purpose, such as a table or a
    formula, is left out)."""
    return page.evaluate("""() => {
        const width = window.innerWidth, found = [];
        const whole = document.documentElement.scrollWidth;
        if (whole > width) found.push(`document ${whole}px`);
        const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) {
            const s = getComputedStyle(p); if (s.overflowX === 'auto' || s.overflowX === 'scroll' ||
            s.overflowX === 'hidden' && p.scrollWidth > p.clientWidth + 1) return true; } return false; };
        for (const e of document.querySelectorAll('[data-testid="stAppViewContainer"] *')) {
            const r = e.getBoundingClientRect();
            if (r.width === 0 || r.height === 0 || !e.checkVisibility()) continue;
            if (r.right > width + 1 && !scrolls(e)) {
                found.push(`${e.tagName.toLowerCase()}${e.dataset.testid ? '[' + e.dataset.testid + ']' : ''}` +
                           `.${String(e.className).slice(0, 40)} right=${Math.round(r.right)}`);
            }
        }
        return found.slice(0, 20);
    }""")


def cut_text(page) -> list[str]:
    """Labels, buttons and headings whose text is cut (an ellipsis, or hidden overflow narrower than the text)."""
    return page.evaluate("""() => {
        const found = [];
        const texts = ':is(button, label, p, h1, h2, h3, span)';
        for (const e of document.querySelectorAll(`[data-testid="stAppViewContainer"] ${texts}`)) {
            const r = e.getBoundingClientRect();
            if (r.width === 0 || r.height === 0 || !e.textContent.trim() || e.closest('.katex')) continue;
            if (!e.checkVisibility()) continue;  // not rendered (a closed expander's content)
            const s = getComputedStyle(e);
            const clips = s.textOverflow === 'ellipsis' || s.overflowX === 'hidden' || s.overflowX === 'clip';
            const text = e.textContent.trim().slice(0, 50);
            if (clips && e.scrollWidth > e.clientWidth + 1) found.push(`${e.tagName.toLowerCase()} "${text}"`);
        }
        return [...new Set(found)].slice(0, 20);
    }""")


def is_local(url: str) -> bool:
    scheme = urllib.parse.urlsplit(url).scheme
    host = urllib.parse.urlsplit(url).hostname or ""
    return scheme in ("data", "blob", "about") or host in ("127.0.0.1", "localhost", "::1", "")


class RequestLog:
    """Every request a browser context makes; `foreign` are those to any host but the app's own."""

    def __init__(self, context) -> None:
        self.urls: list[str] = []
        context.on("request", lambda request: self.urls.append(request.url))

    @property
    def foreign(self) -> list[str]:
        return sorted({url for url in self.urls if not is_local(url)})


# --- the server ---------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    log: Path,
    *,
    checkpoint_root: Path | None = None,
    runs: Path | None = None,
    extra: tuple[str, ...] = (),
    script: Path = APP_SCRIPT,
) -> tuple[subprocess.Popen, App]:
    """The app on a free port (`python app.py`, or `streamlit run` of another `script`), waited for until healthy."""
    port = free_port()
    env = dict(os.environ)
    if checkpoint_root is not None:
        env["EXPLORER_CHECKPOINTS"] = str(checkpoint_root)
    if runs is not None:
        env["EXPLORER_RUNS"] = str(runs)  # the train page's run folders, not runs/app
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [
                *(SERVER_COMMAND if script == APP_SCRIPT else (sys.executable, "-m", "streamlit", "run", str(script))),
                "--server.port",
                str(port),
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
                *extra,
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    app = App(f"http://127.0.0.1:{port}", checkpoint_root)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{app.url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"streamlit did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
    except BaseException:
        stop_server(server)
        raise
    return server, app


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
