"""The app driven through clicks in a real browser: `python app.py` on the fixture checkpoints, headless
Chromium through Playwright. Each `View` opens a page, drives it with its `act(page, app)` (type a sentence,
upload a file, start a training run) and asserts what it shows, then screenshots it (full page) to
test-artifacts/screenshots/<name>.png. Every page is also opened plainly, measured and screenshotted by the
sweep in tests/browser/test_sweep.py.

To check a page more closely, append a `View` to VIEWS.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser.helpers import (
    FIGURE_SELECTOR,
    RENDER_TIMEOUT_MS,
    App,
    assert_no_exception,
    full_screenshot,
    query,
    wait_idle,
)
from ui.pages import PAGES

VIEWPORT = {"width": 1600, "height": 1000}


@dataclass(frozen=True)
class View:
    """One screenshot: a page (by url_path) with a query string, optionally driven and checked by `act`."""

    url_path: str
    query: str = ""
    shot: str = ""  # file name without .png; default: the url_path
    act: Callable | None = None  # act(page, app) -> None; drives the page and asserts
    dark: bool = False  # opened in a browser that prefers a dark colour scheme

    @property
    def name(self) -> str:
        return self.shot or self.url_path


# --- page-specific checks (extend VIEWS below) --------------------------------------------------------------------

WORDS_SENTENCE = "a small child sees the red dog ."


def _engine_output(app: App, checkpoint: str, sentence: str) -> str:
    from explorer.checkpoint import load_checkpoint
    from explorer.inference import translate

    ck = load_checkpoint(app.checkpoint_root / checkpoint)
    return translate(ck.model, ck.tokenizer, [sentence])[0].output


def translate_types_a_sentence(page, app: App) -> None:
    box = page.get_by_role("textbox", name="Sentence")
    box.fill(WORDS_SENTENCE)
    box.press("Enter")
    wait_idle(page)
    expected = _engine_output(app, "words-fixture", WORDS_SENTENCE)
    page.get_by_text(expected, exact=True).first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.locator(".js-plotly-plot").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert "sentence=" in page.url, "the sentence is kept in the URL"
    # The SVG under the heatmap is rendered on click, offline, by a local Chromium.
    with page.expect_download(timeout=RENDER_TIMEOUT_MS) as download:
        page.get_by_role("button", name="SVG").first.click()
    assert download.value.suggested_filename.endswith(".svg")
    assert Path(download.value.path()).read_bytes().lstrip().startswith(b"<svg")


def translate_uploads_a_file(page, app: App) -> None:
    page.get_by_text("Upload a text file", exact=True).click()
    wait_idle(page)
    sentences = ["a man rides a bicycle .", "the dog walks in the park .", "a small child sees the red dog ."]
    page.locator('[data-testid="stMain"] [data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": "sentences.txt", "mimeType": "text/plain", "buffer": "\n".join(sentences).encode()}]
    )
    wait_idle(page)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=RENDER_TIMEOUT_MS)
    # The table is drawn on a canvas; its cells are also in the DOM (for screen readers), though hidden, and
    # filled a moment after the table's element appears (an empty list was read once under load).
    page.wait_for_function(
        """(wanted) => {
            const cells = [...document.querySelectorAll('[data-testid="stDataFrame"] td')].map(c => c.innerText);
            return wanted.every(s => cells.includes(s));
        }""",
        arg=sentences,
        timeout=RENDER_TIMEOUT_MS,
    )
    cells = page.locator('[data-testid="stDataFrame"] td').all_inner_texts()
    for sentence in sentences:
        assert sentence in cells and _engine_output(app, "words-fixture", sentence) in cells, cells
    page.get_by_role("button", name="Download CSV").wait_for(timeout=RENDER_TIMEOUT_MS)


def shows_a_heatmap(page, app: App) -> None:
    page.locator(".js-plotly-plot").first.wait_for(timeout=RENDER_TIMEOUT_MS)


def shows_linked_heads(page, app: App) -> None:
    """Compare's linked heads: a Vega-Lite chart (SVG) with its heatmap cells drawn."""
    page.locator(FIGURE_SELECTOR).first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.locator('[data-testid="stVegaLiteChart"] svg g.mark-rect path').first.wait_for(timeout=RENDER_TIMEOUT_MS)


def train_mid_run(page, app: App) -> None:
    """Start a run from the train page and screenshot it mid-run, after its first evaluation (loss, learning
    rate, throughput, the attention now and its evolution drawn); then stop it to free the machine."""
    for name, value in (("Steps", "100000"), ("Evaluate every (steps)", "20")):
        box = page.get_by_role("spinbutton", name=name, exact=True)
        box.fill(value)
        box.press("Enter")
        wait_idle(page)
    page.get_by_role("button", name="Start training").click()
    # The snapshot slider appears with the second attention snapshot (step 0, then the first evaluation).
    page.get_by_text("Snapshot (training step)").wait_for(timeout=4 * RENDER_TIMEOUT_MS)
    page.wait_for_timeout(3000)  # the next redraws finish plotting
    full_screenshot(page, "train-running")
    page.get_by_role("button", name="Stop").click()
    page.get_by_role("button", name="Resume").wait_for(timeout=RENDER_TIMEOUT_MS)


VIEWS: list[View] = [
    View("translate", query(model="words-fixture"), act=translate_types_a_sentence),
    View(
        "translate",
        query(model="words-fixture", mode="grid", units="words"),
        shot="translate-upload",
        act=translate_uploads_a_file,
    ),
    View(
        "translate",
        query(model="words-fixture", mode="grid", family="encoder_self", sentence=WORDS_SENTENCE),
        shot="translate-grid",
        act=shows_linked_heads,
    ),
    View(
        "translate",
        query(model="words-fixture", mode="lines", family="cross", units="words", sentence=WORDS_SENTENCE),
        shot="translate-head-view-dark",
        act=shows_a_heatmap,
        dark=True,
    ),
    View("compare", query(model="words-fixture", c_n="3", c_sentence=WORDS_SENTENCE), act=shows_linked_heads),
    View(
        "compare",
        query(model="words-fixture", c_n="3", c_sentence=WORDS_SENTENCE),
        shot="compare-dark",
        act=shows_linked_heads,
        dark=True,
    ),
    # On its form although the server's runs folder may hold runs (Train's figures share the server).
    View("train", query(train_view="new"), act=train_mid_run),
]


# --- fixtures -----------------------------------------------------------------------------------------------------


def server_for(view: View, app: App, servers) -> App:
    """The shared server for most views (the browser's colour scheme picks the theme: main_script/.streamlit/
    config.toml sets both), and the training runs' server for the run the train view leaves behind."""
    if view.act is train_mid_run:
        return servers.train_run(app.checkpoint_root)
    return app


def view_url(app: App, view: View) -> str:
    return f"{app.url}/{view.url_path}" + (f"?{view.query}" if view.query else "")


# --- the test -----------------------------------------------------------------------------------------------------


def test_every_page_in_the_page_list_exists():
    for spec in PAGES:
        assert spec.path.is_file(), f"{spec.file} is in ui/pages.py PAGES but does not exist"


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.name)
def test_page_in_browser(app, servers, browser, view: View):
    app = server_for(view, app, servers)
    context = browser.new_context(viewport=VIEWPORT, color_scheme="dark" if view.dark else "light")
    context.set_default_timeout(RENDER_TIMEOUT_MS)  # a shared 2-core machine can take more than 30 s
    page = context.new_page()
    try:
        page.goto(view_url(app, view), timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        assert_no_exception(page)
        if view.act is not None:
            view.act(page, app)
            wait_idle(page)
            assert_no_exception(page)
        full_screenshot(page, view.name)
        page.set_viewport_size(VIEWPORT)
    finally:
        context.close()


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_a_100_kb_link_is_cut_with_a_message_in_the_browser(app, browser):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    page = context.new_page()
    try:
        text = ("a b c d " * 12_800)[:100_000]
        page.goto(f"{app.url}/translate?" + query(model="reverse-fixture", sentence=text), timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        # The model may still be loading when the page first goes idle; the note comes with the page's content.
        page.get_by_text("100,000 characters long").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert_no_exception(page)
        # The box may be filled after the note is shown (a busy machine once read it still empty).
        from playwright.sync_api import expect

        expect(page.get_by_role("textbox", name="Sentence")).to_have_value(
            re.compile(r"^[\s\S]{1000}$"), timeout=RENDER_TIMEOUT_MS
        )
    finally:
        context.close()


def test_a_fresh_server_opens_a_deep_link_and_eight_sessions_at_once(checkpoint_root, servers, browser):
    """The first requests to a new server, on one server (its start costs more than the checks):

    - the very first request is a deep link with state: it opens that page inside the frame (the top bar's
      page list, the sidebar's model picker), with the state from the URL; then every other page by its path;
    - a class opening the link together: once that first session runs, eight more start before any has
      finished (the first one's model still loading).
    """
    app = servers.get("fresh", checkpoint_root=checkpoint_root)
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        first = context.new_page()
        first.goto(
            f"{app.url}/beam?" + query(model="words-fixture", beam_sentence=WORDS_SENTENCE, beam_k="3"),
            timeout=RENDER_TIMEOUT_MS,
            wait_until="commit",
        )
        # The frame's page list comes from the first run's st.navigation: the deep link was the first page the
        # server decided, and the eight below start while it still loads its model.
        first.locator('[data-testid="stTopNav"]').first.wait_for(timeout=2 * RENDER_TIMEOUT_MS)
        _eight_sessions_open(context, app)
        first.bring_to_front()
        wait_idle(first)
        _deep_link_opened_beam(first)
        for spec in PAGES:
            first.goto(f"{app.url}/{spec.url_path}?model=words-fixture", timeout=RENDER_TIMEOUT_MS)
            wait_idle(first)
            assert_no_exception(first)
            assert "Page not found" not in first.content()
            assert first.url.split("?")[0].endswith(f"/{spec.url_path}"), first.url
            current = first.locator('[data-testid="stTopNav"] a[aria-current="page"]')
            assert current.count() == 0 or spec.title in current.first.inner_text(), spec.title
    finally:
        context.close()


def _deep_link_opened_beam(page) -> None:
    """The beam page of the deep link, in the frame, with the link's state."""
    # A fresh server loads the model while the page already shows its title: wait for the result itself.
    page.get_by_text("beam search, k = 3").first.wait_for(timeout=2 * RENDER_TIMEOUT_MS)
    assert_no_exception(page)
    assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "Beam search"
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "Checkpoint" in sidebar, sidebar[:500]
    assert "Look inside" in page.locator('[data-testid="stTopNav"]').inner_text(), "the page list, in the top bar"
    assert "beam search, k = 3" in _main_text(page)
    assert "/beam?" in page.url and "beam_k=3" in page.url


def _eight_sessions_open(context, app: App) -> None:
    """Eight sessions opened together (Translate and Compare in turn), each drawing its chart."""
    pages = [context.new_page() for _ in range(8)]
    for i, page in enumerate(pages):
        target = (
            ("translate?" + query(model="words-fixture", sentence=WORDS_SENTENCE))
            if i % 2
            else ("compare?" + query(model="words-fixture", c_sentence=WORDS_SENTENCE))
        )
        page.goto(f"{app.url}/{target}", timeout=RENDER_TIMEOUT_MS, wait_until="commit")
    for page in pages:
        page.bring_to_front()  # Chromium barely runs background tabs
        wait_idle(page)
        assert_no_exception(page)
        # Translate draws Plotly figures, Compare its linked heads as one Vega-Lite chart
        charts = page.locator('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]')
        try:
            charts.first.wait_for(state="attached", timeout=RENDER_TIMEOUT_MS)
        except Exception as error:
            raise AssertionError(f"no chart on {page.url}:\n{_main_text(page)[:1500]}") from error
    for page in pages:
        page.close()
