"""No text drawn over other text in the Train page's figures, at a projector's 1024x768 and 1280x720 (the other
pages' figures are measured by the sweep, tests/browser/test_sweep.py). Train's figures need a run: `explorer
train` trains the reverse task for 40 steps into the runs folder of the training runs' server (a few seconds;
tests/browser/conftest.py `Servers.train_run`), so the Watch view opens on it with its curves and the attention
snapshots at steps 0, 10, 20, 30 and 40 (the "during training" figure) without a run started from the page.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.browser.helpers import (
    RENDER_TIMEOUT_MS,
    REPO,
    TRAIN_RUN,
    App,
    assert_no_exception,
    wait_for_relayout,
    wait_idle,
)
from tests.browser.overlaps import text_overlaps

SIZES = ({"width": 1024, "height": 768}, {"width": 1280, "height": 720})
RUN = "reverse-demo"


def _overlaps_at_each_size(browser, url: str, figures: int) -> list[str]:
    """Open `url` at the first size, wait for `figures` plotly figures, then measure at every size."""
    page = browser.new_page(viewport=SIZES[0])
    try:
        page.goto(url, timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        assert_no_exception(page)
        page.wait_for_function(
            f"() => document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot').length >= {figures}",
            timeout=RENDER_TIMEOUT_MS,
        )
        found = []
        for size in SIZES:
            page.set_viewport_size(size)
            wait_for_relayout(page)
            found += [f"{size['width']}x{size['height']}: {line}" for line in text_overlaps(page)]
        return found
    finally:
        page.close()


@pytest.fixture(scope="module")
def train_app(servers, checkpoint_root) -> App:
    """The training runs' server, its runs folder holding one finished 40-step run of the reverse task with a
    watched sentence (beside the run the page test of Train may leave there)."""
    runs = servers.runs(TRAIN_RUN)
    if not (runs / RUN).is_dir():
        runs.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "explorer", "train", "--data", "reverse", "--preset", "tiny", "--vocab", "64",
             "--steps", "40", "--warmup", "10", "--batch-tokens", "512", "--eval-every", "10",
             "--bleu-sentences", "20", "--save-every", "40", "--threads", "1", "--quiet",
             "--watch", "a b c d e f", "--out", str(runs / RUN)],
            cwd=REPO,
            check=True,
            timeout=300,
        )  # fmt: skip
    return servers.train_run(checkpoint_root)


def test_train_figures_have_no_overlapping_text(browser, train_app: App):
    # Loss, learning rate, throughput, the snapshot's heatmap and the snapshots during training.
    assert not _overlaps_at_each_size(browser, f"{train_app.url}/train?train_run={RUN}", figures=5)


_SVG_PAGE = """<div data-testid="stMain"><div class="js-plotly-plot"><svg width="600" height="300"
    font-family="sans-serif" font-size="16">
  <text x="10" y="40">A title over</text><text x="60" y="46">a subplot title</text>
  <text x="300" y="200" transform="rotate(-45 300 200)">slanted label one</text>
  <text x="318" y="200" transform="rotate(-45 318 200)">slanted label two</text>
  <text x="450" y="200" transform="rotate(-45 450 200)">slanted too close</text>
  <text x="458" y="200" transform="rotate(-45 458 200)">slanted too close 2</text>
  <text x="10" y="120">apart</text><text x="10" y="160">apart too</text>
</svg></div></div>"""


def test_the_overlap_check_finds_text_over_text_and_not_slanted_neighbours(browser):
    """The check the sweep runs on every page: two upright texts drawn over each other are found, and two labels
    slanted at 45° 8 px apart along the axis; two slanted 18 px apart (their upright boxes overlap, their
    letters do not) are not."""
    page = browser.new_page()
    try:
        page.set_content(_SVG_PAGE)
        found = text_overlaps(page)
    finally:
        page.close()
    assert len(found) == 2, found
    assert '"A title over" overlaps "a subplot title" by 25x11 px' in found[0], found
    assert '"slanted too close" overlaps "slanted too close 2"' in found[1], found
