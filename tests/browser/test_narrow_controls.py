"""Controls in narrow columns at 1024x768, both languages: Translate's pickers beside the heatmap (the shipped
model: 4 heads, 3 layers). The Train page's form is checked in tests/browser/test_sweep.py.

The pickers' column is about a quarter of the main area. At 1024 px it was 135 px wide: the four head
buttons broke into 1 2 3 / 4, and the three attention-family buttons into three rows with their joined
borders open (`broken_button_rows`). The column is wider now, the segmented buttons narrower, and the family
is a list of radio buttons; nothing in the main area may be cut and the head and layer buttons sit on one row.
On Train, the Korean label of the "save when finished" checkbox, in the right two fifths of section 5, was cut
with an ellipsis (a checkbox label keeps to one line); the label is short now and the where is in its help.
The Beam page's tree draws its token labels in a layer above every marker, which must let a click reach the node.
"""

from __future__ import annotations

import pytest

from tests.browser.clipping import broken_button_rows, everything_cut
from tests.browser.helpers import (
    assert_no_exception,
    cut_text,
    first_figure_box,
    opened,
    overflowing,
    query,
    wait_for_figure,
)


@pytest.mark.parametrize("theme, lang", [("light", "en"), ("dark", "ko")])
def test_the_pickers_fit_their_column_at_1024(shipped_app, browser, theme, lang):
    url = f"{shipped_app.url}/translate?" + query(model="multi30k-en-de", lang=lang, mode="head")
    with opened(browser, url, theme=theme) as page:
        wait_for_figure(page)
        main = '[data-testid="stMain"]'
        assert broken_button_rows(page, main) == []
        assert everything_cut(page) + cut_text(page) + overflowing(page) == []
        head_buttons = page.locator(f'{main} .st-key-head button[data-variant="segmented_control"]')
        assert head_buttons.count() == 4, "the shipped model has four heads"
        family = page.locator(f'{main} .st-key-family [role="radiogroup"] label')
        assert family.count() == 3, "the three attention families, one a line"


# A caption of Multi30k's usual length: the shipped model translates it into 12 pieces and </s>, so the
# cross-attention heatmap has 13 query rows.
LONG_SENTENCE = "A man in a blue shirt is walking his dog down the street."


def tick_labels(page, axis: str) -> list[dict]:
    """The first figure's `axis` ("x" or "y") tick labels: text, vertical centre and font size, in screen px."""
    return page.evaluate(
        """(axis) => Array.from(document.querySelectorAll(
        `[data-testid="stMain"] [data-testid="stPlotlyChart"] .${axis}tick text`))
        .filter(e => e.textContent.trim())
        .map(e => { const r = e.getBoundingClientRect();
                    return {middle: (r.top + r.bottom) / 2, size: parseFloat(getComputedStyle(e).fontSize),
                            text: e.textContent}; })""",
        axis,
    )


@pytest.mark.parametrize("presenter", ["1", "0"], ids=["presenter", "normal"])
def test_heatmap_rows_readable_at_1024(shipped_app, browser, presenter):
    """At 1024x768 in Korean, cross-attention of a 13-token sentence: a row label must not run into the next (their
    centres at least a font size apart), in presenter mode and in the normal layout. In presenter mode they did:
    the Korean title wrapped to three lines at the width of the normal layout's column (presenter mode hides the
    sidebar, so its column is wider), the key labels stood upright and the decoding note took a line, which left
    each row of the 440 px figure 11.5 px for 18 px labels. In the normal layout the rows were 12.7 px apart for
    16 px labels: the title took three lines there too."""
    url = f"{shipped_app.url}/translate?" + query(
        model="multi30k-en-de", sentence=LONG_SENTENCE, presenter=presenter, lang="ko", family="cross", mode="head"
    )
    with opened(browser, url) as page:
        wait_for_figure(page)
        labels = sorted(tick_labels(page, "y"), key=lambda label: label["middle"])
        assert len(labels) == 13, [label["text"] for label in labels]
        crowded = [
            f"{a['text']!r} and {b['text']!r}: {b['middle'] - a['middle']:.1f} px apart, {a['size']:.0f} px text"
            for a, b in zip(labels, labels[1:], strict=False)
            if b["middle"] - a["middle"] < a["size"] - 0.5
        ]
        assert not crowded, crowded
        title_lines = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"] .gtitle tspan.line').count()
        assert title_lines <= 2, f"title on {title_lines} lines"
        box = first_figure_box(page)
        assert box is not None and box["y"] + box["height"] <= 768, f"the figure on the first screen: {box}"


# Where a kept node off the highlighted path (no orange outline) lies on the screen, from the figure's own axes.
_NODE_ON_SCREEN = """() => {
    const plot = document.querySelector('[data-testid="stMain"] .js-plotly-plot');
    const layout = plot._fullLayout, box = plot.getBoundingClientRect();
    const kept = plot.data.find(t => t.mode === "markers" && t.customdata?.length && t.customdata[0][3] === "kept");
    const i = kept.marker.line.width.findIndex(w => w === 0);
    return {x: box.left + layout.xaxis._offset + layout.xaxis.l2p(kept.x[i]),
            y: box.top + layout.yaxis._offset + layout.yaxis.l2p(kept.y[i]),
            labels_last: plot.data[plot.data.length - 1].name === "labels"};
}"""


def test_a_click_on_a_beam_tree_node_under_the_label_layer_picks_it(shipped_app, browser):
    """The tree's token labels are one layer above every marker (`beam_tree._labels`: the highlighted path's
    finished star had hidden "▁Fah…" at 1024x768). That layer takes no clicks of its own: a click on a node
    picks its hypothesis. With hover and clicks on the layer, the click found no node id and the page failed."""
    with opened(browser, f"{shipped_app.url}/beam?" + query(model="multi30k-en-de", lang="en")) as page:
        wait_for_figure(page)
        assert not page.get_by_text("Showing the node picked in the tree").count()
        node = page.evaluate(_NODE_ON_SCREEN)
        assert node["labels_last"], "the labels are the top layer"
        page.mouse.click(node["x"], node["y"])
        page.get_by_text("Showing the node picked in the tree").wait_for()
        assert_no_exception(page)
