"""The beam tree in Chromium: a click on a node picks that hypothesis, with the token labels drawn above every
marker (`beam_tree._labels`), in a layer that takes no clicks of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser_helpers import (
    RENDER_TIMEOUT_MS,
    assert_no_exception,
    query,
    start_server,
    stop_server,
    wait_for_figure,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints"

# Where a kept node off the highlighted path (no orange outline) lies on the screen, from the figure's own axes.
_NODE_ON_SCREEN = """() => {
    const plot = document.querySelector('[data-testid="stMain"] .js-plotly-plot');
    const layout = plot._fullLayout, box = plot.getBoundingClientRect();
    const kept = plot.data.find(t => t.mode === "markers" && t.customdata && t.customdata[0][3] === "kept");
    const widths = kept.marker.line.width;
    const i = widths.findIndex(w => w === 0);
    return {x: box.left + layout.xaxis._offset + layout.xaxis.l2p(kept.x[i]),
            y: box.top + layout.yaxis._offset + layout.yaxis.l2p(kept.y[i]),
            labels_last: plot.data[plot.data.length - 1].name === "labels"};
}"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not (SHIPPED / "multi30k-en-de" / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    logs = tmp_path_factory.mktemp("beam_tree")
    server, running = start_server(logs / "server.log", checkpoint_root=SHIPPED, runs=logs / "runs")
    yield running
    stop_server(server)


def test_a_click_on_a_node_under_the_label_layer_picks_it(app, browser):
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{app.url}/beam?" + query(model="multi30k-en-de", lang="en"))
        wait_idle(page)
        assert_no_exception(page)
        wait_for_figure(page)
        assert not page.get_by_text("Showing the node picked in the tree").count()
        node = page.evaluate(_NODE_ON_SCREEN)
        assert node["labels_last"], "the labels are the top layer"
        page.mouse.click(node["x"], node["y"])
        page.get_by_text("Showing the node picked in the tree").wait_for()
        assert_no_exception(page)
    finally:
        context.close()
