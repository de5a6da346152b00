"""The Beam and Heads pages in front of a class, in a real browser at 1024x768 and 1280x720 (the shipped model):
the beam tree's drawn labels overlap no other label or node and none runs past the figure, the step and n-best
tables need no sideways scrolling, and the Heads page's head switches sit on the first screen beside the figure."""

from __future__ import annotations

import pytest

from tests.browser.helpers import SCREENSHOTS, opened, query, wait_for_figure

# The tree's drawn label texts and node markers, and its svg's box, in page px.
_TREE_BOXES = """() => {
    const plot = document.querySelector('.st-key-beam_tree .js-plotly-plot');
    const box = e => { const r = e.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
    const labels = Array.from(plot.querySelectorAll('.scatterlayer .textpoint text'))
        .filter(e => e.textContent.trim()).map(e => ({text: e.textContent, ...box(e)}));
    const nodes = Array.from(plot.querySelectorAll('.scatterlayer .points path.point')).map(box);
    return {labels, nodes, figure: box(plot)};
}"""

# Tables whose grid scrolls sideways: wider content than their box.
_SCROLLING_TABLES = """() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller'))
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => `${e.scrollWidth} > ${e.clientWidth}`)"""


def overlaps(a: dict, b: dict, slack: float = 1.0) -> bool:
    return a["l"] + slack < b["r"] and b["l"] + slack < a["r"] and a["t"] + slack < b["b"] and b["t"] + slack < a["b"]


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)], ids=["1024", "1280"])
def test_the_beam_tree_and_tables_fit(shipped_app, browser, size):
    with opened(browser, f"{shipped_app.url}/beam?" + query(model="multi30k-en-de", lang="en"), size) as page:
        wait_for_figure(page)
        found = page.evaluate(_TREE_BOXES)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"beam-{size[0]}.png"), full_page=True)
        labels, nodes, figure = found["labels"], found["nodes"], found["figure"]
        assert labels and nodes
        for i, label in enumerate(labels):
            assert "\u2581" not in label["text"] and "\u2026" not in label["text"], label["text"]
            assert label["l"] >= figure["l"] and label["r"] <= figure["r"], f"{label['text']!r} cut: {label}"
            for other in labels[i + 1 :]:
                assert not overlaps(label, other), f"{label['text']!r} overlaps {other['text']!r}"
            for node in nodes:
                assert not overlaps(label, node), f"{label['text']!r} overlaps a node at {node}"
        assert not page.evaluate(_SCROLLING_TABLES), "a table scrolls sideways: a column is off the edge"


def test_the_head_switches_are_beside_the_figure_on_the_first_screen(shipped_app, browser):
    url = f"{shipped_app.url}/heads?" + query(model="multi30k-en-de", lang="en", heads="cross.2.0")
    with opened(browser, url, (1024, 768)) as page:
        wait_for_figure(page)
        page.screenshot(path=str(SCREENSHOTS / "heads-ablation-1024.png"))
        switch = page.locator(".st-key-hm_cross_2_1").bounding_box()
        figure = page.locator(".st-key-heads_remaining").bounding_box()
        assert switch is not None and figure is not None
        assert switch["y"] + switch["height"] <= 768, f"the last layer's switches below the fold: {switch}"
        assert figure["y"] + figure["height"] / 2 <= 768, f"the figure's upper half on the first screen: {figure}"
        assert switch["x"] >= figure["x"] + figure["width"] - 1, "beside the figure, to its right"
