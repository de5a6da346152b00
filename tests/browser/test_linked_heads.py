"""Synchronized heads in a real browser: on the Compare page, pointing at a cell of one head
highlights the same query row in every other head (full strength and outlined, the other rows dimmed), all in
the browser, with no request to any host but the app's own; the chart fits the first screen, its text is
14 px or more, and nothing of it is cut by its column, at 1280x720 (light) and 1024x768 (dark, Korean).

The chart is drawn as SVG (the builder asks for it), and Vega gives every cell an aria-label that starts with
its encoded fields ("key: 2; query: 3; weight: ..."), so a cell's head (its view's group) and query row can
be read from the page itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.helpers import (
    RENDER_TIMEOUT_MS,
    RequestLog,
    assert_no_exception,
    first_figure_box,
    query,
    wait_for_figure,
    wait_idle,
)

CHART = '[data-testid="stVegaLiteChart"]'
HOVERED = 3  # the query row pointed at

# Per head (a view of the concat, or a cell of the facet grid), per heatmap cell: its query row, opacity and
# outline, read from the SVG.
_CELLS_JS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg g.mark-rect.role-mark')]
  .map(group => [...group.querySelectorAll('path')].map(p => {
    const match = /(?:^|; )query: (\\d+);/.exec(p.getAttribute('aria-label') || '');
    return {query: match ? Number(match[1]) : null, opacity: Number(p.getAttribute('opacity') ?? 1),
            outlined: !!p.getAttribute('stroke') && p.getAttribute('stroke') !== 'none'};
  }))"""


def cells(page) -> list[list[dict]]:
    return page.evaluate(_CELLS_JS)


def highlighted(heads: list[list[dict]], row: int) -> bool:
    """Every head shows `row` full strength and outlined, and every other row dimmed without an outline."""
    return all(
        (c["opacity"] == 1 and c["outlined"]) if c["query"] == row else (c["opacity"] < 0.5 and not c["outlined"])
        for head in heads
        for c in head
    )


def hover_links_every_head(page, n_heads: int, height: int) -> None:
    """Point at row HOVERED of the first head: it lights up in all `n_heads`; leave the chart: all back."""
    page.locator(f"{CHART} svg g.mark-rect.role-mark path").first.wait_for(state="visible")
    before = cells(page)
    assert len(before) == n_heads, f"expected {n_heads} heads, found {len(before)}"
    rows = {c["query"] for head in before for c in head}
    assert HOVERED in rows and None not in rows, "every cell names its query row"
    assert all(c["opacity"] == 1 and not c["outlined"] for head in before for c in head)

    # The middle of a cell of the first head's row, as a reader would point at it.
    cell = page.locator(f"{CHART} svg g.mark-rect.role-mark").first.locator("path")
    box = cell.nth(next(i for i, c in enumerate(before[0]) if c["query"] == HOVERED)).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function(f"() => ({_CELLS_JS})().at(-1).some(c => c.outlined)", timeout=10_000)
    assert highlighted(cells(page), HOVERED), "the hovered query row is not highlighted in every head"

    page.mouse.move(5, height - 5)  # the pointer leaves the chart: every head back to full strength
    page.wait_for_function(f"() => ({_CELLS_JS})().flat().every(c => c.opacity === 1)")


def fits(page, height: int) -> None:
    """The chart is in the first screen, inside its column, and no text in it is under 14 px."""
    figure = first_figure_box(page)
    assert figure is not None and figure["y"] >= 0 and figure["y"] + figure["height"] <= height + 1, figure
    fit = page.evaluate(f"""() => {{
        const svg = document.querySelector('{CHART} svg').getBoundingClientRect();
        const main = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
        const sizes = [...document.querySelectorAll('{CHART} svg text')]
            .map(t => parseFloat(t.getAttribute('font-size')));
        return {{svgRight: svg.right, mainRight: main.right, minFont: Math.min(...sizes), texts: sizes.length}};
    }}""")
    assert fit["svgRight"] <= fit["mainRight"] + 1, f"the chart runs past its column: {fit}"
    assert fit["texts"] > 0 and fit["minFont"] >= 14, f"text under 14 px in the chart: {fit}"


@pytest.mark.parametrize(
    ("theme", "size", "lang"), [("light", (1280, 720), "en"), ("dark", (1024, 768), "ko")], ids=["light", "dark-ko"]
)
def test_hover_in_one_head_highlights_the_query_in_every_head(app, browser, theme, size, lang):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=theme)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(context)
    try:
        page = context.new_page()
        url = f"{app.url}/compare?" + query(
            model="words-fixture",
            lang=lang,
            c_compare="heads",
            c_sentence="a man rides a bicycle .",
            c_n="3",
            c_f0="encoder_self",
            c_l0="1",
            c_h0="1",
            c_f1="encoder_self",
            c_l1="1",
            c_h1="2",
            c_f2="encoder_self",
            c_l2="2",
            c_h2="1",
        )
        page.goto(url, timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        assert_no_exception(page)
        wait_for_figure(page)
        hover_links_every_head(page, 3, height)
        fits(page, height)
    finally:
        context.close()
    assert requests.urls, "the request log recorded nothing"
    assert not requests.foreign, f"requests left the machine: {requests.foreign}"


@pytest.fixture(scope="module")
def grid_app(servers):
    """tests/browser/linked_grid_app.py served on its own."""
    return servers.get("linked-grid", script=Path(__file__).with_name("linked_grid_app.py"))


def test_hover_in_the_layer_by_head_grid_highlights_every_head(grid_app, browser):
    """The facet grid (3 layers x 4 heads) links its twelve heads the same way, at 1024x768."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(context)
    try:
        page = context.new_page()
        page.goto(grid_app.url, timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        assert_no_exception(page)
        wait_for_figure(page)
        texts = page.evaluate(f"() => [...document.querySelectorAll('{CHART} svg text')].map(t => t.textContent)")
        # Counted from 1; columns too narrow for "Head 4" are numbered under one "Head" title.
        heads = {"Head 1", "Head 4"} <= set(texts) or {"Head", "1", "4"} <= set(texts)
        assert heads and {"Layer 1", "Layer 3"} <= set(texts), f"1-based headers, not {sorted(set(texts))}"
        assert not {"Layer 0", "Head 0", "0"} & set(texts), sorted(set(texts))
        hover_links_every_head(page, 12, 768)
        fits(page, 768)
    finally:
        context.close()
    assert not requests.foreign, f"requests left the machine: {requests.foreign}"
