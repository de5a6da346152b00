"""The tour as a lecturer walks it, in a real browser at 1280x720 and 1024x768.

- Changing the stop shows the new stop from its top, whichever way the stop changes: the Next and Previous
  buttons, a page number of the stop picker, and the presenter's PageDown / PageUp keys. Before each change
  the page is scrolled down, as a lecturer who has read to the end of a stop leaves it; after it the main area
  is back at the top and the new stop's heading lies inside the first screen (one page load per size).
  The walk leaves the server's log clean: no warning with a stack trace at any change of stop.
- Every formula of every stop fits its box in presenter mode: no KaTeX block scrolls, and no glyph of it (an
  exponent, the bar of a transpose) passes the edges of the box that clips it (`FORMULAS_JS`; without presenter
  mode tests/browser/test_tour.py runs the same check).
"""

from __future__ import annotations

import pytest

from explorer.tour.stops import STOPS
from tests.browser.helpers import RENDER_TIMEOUT_MS, assert_no_exception, query, wait_for_relayout, wait_idle

SENTENCE = "a small child sees the red dog ."
SCROLLER = '[data-testid="stMain"]'


def scroll_down(page) -> None:
    """Scroll every container that may scroll the main area to its bottom, and check one of them moved."""
    moved = page.evaluate(
        """() => { let moved = 0;
        document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"], html')
            .forEach(e => { e.scrollTo(0, e.scrollHeight); moved = Math.max(moved, e.scrollTop); });
        return moved; }"""
    )
    assert moved > 100, f"the stop is too short to scroll ({moved} px): nothing to test"


def scrolled(page) -> float:
    return page.evaluate(
        """() => Math.max(...Array.from(document.querySelectorAll(
            '[data-testid="stMain"], [data-testid="stAppViewContainer"], html')).map(e => e.scrollTop))"""
    )


def shown_stop(page, number: int, width: int, height: int) -> list[str]:
    """What is wrong with stop `number` as shown: the heading, its place, the scroll position."""
    heading = page.locator('[data-testid="stMain"] h5').first
    try:
        page.wait_for_function(
            "n => (document.querySelector('[data-testid=\"stMain\"] h5') || {}).innerText?.startsWith(n + '/')",
            arg=number,
            timeout=RENDER_TIMEOUT_MS,
        )
    except Exception as error:  # noqa: BLE001 - playwright's TimeoutError, said with what the page shows instead
        shown = heading.inner_text() if heading.count() else None
        raise AssertionError(f"stop {number} never shown: the heading reads {shown!r} at {page.url}") from error
    wait_idle(page)
    assert_no_exception(page)
    problems = []
    box = heading.bounding_box()
    if box is None or box["y"] < 0 or box["y"] + box["height"] > height:
        problems.append(f"stop {number} at {width}x{height}: its heading is at {box}, not on the first screen")
    if (top := scrolled(page)) > 0:
        problems.append(f"stop {number} at {width}x{height}: the main area is scrolled {top:.0f} px down")
    return problems


# A server's log line carries no level: a warning shows by its stack ("Stack (most recent call last)").
LOG_WARNINGS = ("Traceback", " WARNING ", "Stack (most recent call last)")


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1024, 768)])
def test_every_way_to_change_the_stop_starts_at_its_top_and_logs_no_warning(app, browser, servers, width, height):
    """From stop 1 Next, then each way to change the stop; the shared server's log gains no warning."""
    log = servers.log("fixtures")
    logged_before = log.stat().st_size
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    problems: list[str] = []
    try:
        page = context.new_page()
        url = f"{app.url}/tour?" + query(model="words-fixture", tour_sentence=SENTENCE, stop="1", presenter="1")
        page.goto(url, timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        problems += shown_stop(page, 1, width, height)
        page.locator(".st-key-tour_next button").click()
        problems += [f"Next from stop 1: {p}" for p in shown_stop(page, 2, width, height)]

        moves = (
            ("Next", 3, lambda: page.locator(".st-key-tour_next button").click()),
            ("Previous", 2, lambda: page.locator(".st-key-tour_prev button").click()),
            ("page number", 4, lambda: page.locator(SCROLLER).locator('[aria-label="Page 4"]').click()),
            ("PageDown", 5, lambda: page.keyboard.press("PageDown")),
            ("PageUp", 4, lambda: page.keyboard.press("PageUp")),
        )
        for how, number, move in moves:
            scroll_down(page)
            move()
            problems += [f"{how}: {p}" for p in shown_stop(page, number, width, height)]
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    with log.open("rb") as text:
        text.seek(logged_before)
        walk = text.read().decode(errors="replace")
    for sign in LOG_WARNINGS:
        assert sign not in walk, walk[-4000:]


# Each KaTeX display block: does it scroll, and which of its glyphs pass the block's box (which clips them)?
FORMULAS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] .katex-display')).map((box, i) => {
    const column = box.closest('[data-testid="stColumn"]') || box.parentElement;
    const c = column.getBoundingClientRect(), out = [];
    const d = box.getBoundingClientRect();
    // The box that clips: the formula's own block, narrowed to the column it sits in.
    const b = {left: Math.max(c.left, d.left), right: Math.min(c.right, d.right), top: d.top, bottom: d.bottom};
    if (box.scrollWidth > box.clientWidth + 1) out.push(`scrolls: ${box.scrollWidth} px in ${box.clientWidth}`);
    for (const e of box.querySelectorAll('.katex-html *')) {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || !e.textContent.trim()) continue;
        if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
            out.push(`"${e.textContent.slice(0, 20)}" at x ${Math.round(r.left)}..${Math.round(r.right)}, ` +
                     `y ${Math.round(r.top)}..${Math.round(r.bottom)} outside ${Math.round(b.left)}..` +
                     `${Math.round(b.right)}, ${Math.round(b.top)}..${Math.round(b.bottom)}`);
            break;
        }
    }
    return out.length ? `formula ${i + 1}: ${out.join('; ')}` : '';
}).filter(Boolean)"""


# Without presenter mode the same check runs inside tests/browser/test_tour.py's walk, in both languages.
@pytest.mark.parametrize("presenter", ["1"])
def test_every_formula_fits_its_box(app, browser, presenter):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    problems: list[str] = []
    try:
        page = context.new_page()
        for stop in STOPS:
            page.set_viewport_size({"width": 1280, "height": 720})
            url = f"{app.url}/tour?" + query(
                model="words-fixture", tour_sentence=SENTENCE, stop=str(stop.number), presenter=presenter
            )
            page.goto(url, timeout=RENDER_TIMEOUT_MS)
            wait_idle(page)
            assert_no_exception(page)
            # KaTeX draws after the page settles (its script loads on first use): wait for every formula.
            page.wait_for_function(
                "n => document.querySelectorAll('[data-testid=\"stMain\"] .katex-display .katex-html').length >= n",
                arg=len(stop.formulas),
                timeout=RENDER_TIMEOUT_MS,
            )
            for width, height in ((1280, 720), (1024, 768)):
                page.set_viewport_size({"width": width, "height": height})
                wait_for_relayout(page)
                found = page.evaluate(FORMULAS_JS)
                problems += [f"stop {stop.number} at {width}x{height}, presenter={presenter}: {f}" for f in found]
    finally:
        context.close()
    assert not problems, "\n".join(problems)
