"""The tour on a projector: every stop, in English and in Korean, in a real browser at
1024x768 and 1280x720, on one `python app.py` server and one headless Chromium.

Each stop is opened by its link (`/tour?stop=N&lang=..`) in the same browser tab and measured at both sizes
(the window is resized; Streamlit does not rerun on a resize, plotly re-lays out). Without scrolling, the
stop's live figure (the plotly chart the stop draws first, `tour_figure_<stop key>`) and the first figure of
the main area lie inside the first screen; on the whole stop nothing is wider than the window and nothing is
cut: no formula box that scrolls and no glyph of a formula outside its box, no control cut by its container
or broken over two rows, no label ending in an ellipsis, no figure text outside its figure; in Korean the
stop's text is Korean. The measured figure boxes are written to test-artifacts/tour_first_screen.json.
"""

from __future__ import annotations

import json
import re

import pytest

from explorer.tour.stops import STOPS
from tests.browser.clipping import everything_cut
from tests.browser.helpers import (
    RENDER_TIMEOUT_MS,
    REPO,
    assert_no_exception,
    cut_text,
    first_figure_box,
    overflowing,
    query,
    wait_for_relayout,
    wait_idle,
)
from tests.browser.test_tour_walk import FORMULAS_JS

SIZES = ((1024, 768), (1280, 720))
SENTENCE = "a small child sees the red dog ."
HANGUL = re.compile(r"[\uac00-\ud7a3]")
RECORD = REPO / "test-artifacts" / "tour_first_screen.json"
measured: dict[str, dict[str, dict[int, dict]]] = {}


@pytest.fixture(scope="module", autouse=True)
def record_measurements():
    """Write what the tests measured once they have all run."""
    yield
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(measured, indent=1) + "\n")


def stop_url(app, number: int, lang: str) -> str:
    return f"{app.url}/tour?" + query(model="words-fixture", tour_sentence=SENTENCE, stop=str(number), lang=lang)


def stop_figure(page, key: str):
    """The stop's own live figure: the plotly chart drawn with the key `tour_figure_<key>`."""
    keyed = f".st-key-tour_figure_{key}"
    return page.locator(
        f'[data-testid="stMain"] :is({keyed}[data-testid="stPlotlyChart"], {keyed} [data-testid="stPlotlyChart"])'
    ).first


def spans(box: dict | None) -> str:
    if box is None:
        return "none"
    return f"x {box['x']:.0f}..{box['x'] + box['width']:.0f}, y {box['y']:.0f}..{box['y'] + box['height']:.0f} px"


def on_first_screen(box: dict | None, width: int, height: int) -> bool:
    return (
        box is not None
        and box["y"] >= 0
        and box["x"] >= 0
        and box["y"] + box["height"] <= height + 0.5
        and box["x"] + box["width"] <= width + 0.5
    )


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_stop_shows_its_figure_on_the_first_screen_and_nothing_cut(app, browser, lang):
    width, height = SIZES[-1]
    context = browser.new_context(
        viewport={"width": width, "height": height}, locale="ko-KR" if lang == "ko" else "en-US"
    )
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    problems: list[str] = []
    record = measured.setdefault(lang, {})
    try:
        page = context.new_page()
        for stop in STOPS:
            where = f"stop {stop.number} ({stop.key}) {lang}"
            page.set_viewport_size({"width": width, "height": height})
            page.goto(stop_url(app, stop.number, lang), timeout=RENDER_TIMEOUT_MS)
            wait_idle(page)
            assert_no_exception(page)
            heading = page.locator('[data-testid="stMain"] h5').first.inner_text()
            if not heading.startswith(f"{stop.number}/"):
                problems.append(f"{where}: the heading is {heading!r}")
            # A heading may keep the paper's term in English (GLOSSARY: "Scaled Dot-Product Attention" is kept
            # as it is), so Korean is asserted on the stop's text as a whole.
            body = page.locator('[data-testid="stMain"]').first.inner_text()
            if lang == "ko" and not HANGUL.search(body):
                problems.append(f"{where}: the stop shows no Korean text: {heading!r}")
            figure = stop_figure(page, stop.key)
            figure.wait_for(state="visible", timeout=RENDER_TIMEOUT_MS)
            # KaTeX draws after the page settles (its script loads on first use): wait for every formula.
            page.wait_for_function(
                "n => document.querySelectorAll('[data-testid=\"stMain\"] .katex-display .katex-html').length >= n",
                arg=len(stop.formulas),
                timeout=RENDER_TIMEOUT_MS,
            )
            for size in SIZES:
                at = f"{where} {size[0]}x{size[1]}"
                page.set_viewport_size({"width": size[0], "height": size[1]})
                wait_for_relayout(page)  # plotly re-lays out after a resize
                first = first_figure_box(page)  # also scrolls the page to the top
                own = figure.bounding_box()
                record.setdefault(f"{size[0]}x{size[1]}", {})[stop.number] = {
                    "heading": heading,
                    "figure": own,
                    "first_figure": first,
                }
                if not on_first_screen(own, *size):
                    problems.append(f"{at}: the stop's figure spans {spans(own)}, not inside the first screen")
                if first != own and not on_first_screen(first, *size):
                    problems.append(f"{at}: the first figure spans {spans(first)}, not inside the first screen")
                problems.extend(f"{at}: wider than the window: {found}" for found in overflowing(page))
                problems.extend(f"{at}: cut: {found}" for found in cut_text(page) + everything_cut(page))
                problems.extend(f"{at}: {found}" for found in page.evaluate(FORMULAS_JS))
    finally:
        context.close()
    assert not problems, "\n".join(problems)
