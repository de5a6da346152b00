"""Translate in front of a class (the shipped Multi30k model, at 1024x768 and 1280x720): the source sentence is
on the first screen as text, on the same line as its translation, and the heatmap's token labels carry no
SentencePiece "▁" unless the "pieces as the model sees them" switch asks for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.helpers import RENDER_TIMEOUT_MS, assert_no_exception, query, wait_for_figure, wait_idle

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints"
SENTENCE = "Two dogs play in the snow."


@pytest.fixture(scope="module")
def app(servers):
    if not (SHIPPED / "multi30k-en-de" / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    return servers.get("shipped", checkpoint_root=SHIPPED)


def _tick_texts(page) -> list[str]:
    # SVG text has no innerText: its textContent is what is drawn.
    return page.eval_on_selector_all(
        '[data-testid="stMain"] .xtick text, [data-testid="stMain"] .ytick text', "els => els.map(e => e.textContent)"
    )


@pytest.mark.parametrize("width, height", [(1024, 768), (1280, 720)])
def test_source_beside_translation_and_labels_without_marker(app, browser, width, height, tmp_path):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{app.url}/translate?" + query(model="multi30k-en-de", sentence=SENTENCE, mode="head"))
        wait_idle(page)
        wait_for_figure(page)
        assert_no_exception(page)
        page.screenshot(path=str(tmp_path / f"translate-{width}.png"))
        main = page.locator('[data-testid="stMain"]')
        source = main.locator("h3", has_text=SENTENCE).first.bounding_box()
        output = main.locator("h2").first.bounding_box()
        assert source and output, "the source and the translation are both shown as text in the main area"
        assert source["x"] + source["width"] <= output["x"], "the source is left of its translation"
        assert source["y"] < output["y"] + output["height"] and output["y"] < source["y"] + source["height"]
        assert source["y"] + source["height"] <= height, "the source is on the first screen"
        ticks = _tick_texts(page)
        assert ticks and not any("\u2581" in text for text in ticks), ticks
        if width == 1280:  # the switch, once: the pieces as the model sees them
            page.goto(f"{app.url}/translate?" + query(model="multi30k-en-de", sentence=SENTENCE, marker="true"))
            wait_idle(page)
            wait_for_figure(page)
            assert any("\u2581" in text for text in _tick_texts(page))
    finally:
        context.close()
