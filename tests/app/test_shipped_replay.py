"""The Heads page replays the shipped toy-reverse model's training, from random weights to the anti-diagonal."""

from __future__ import annotations

import pytest

from explorer.training.snapshots import load_snapshots
from tests.apptest_helpers import chart, open_page, plotly_array
from tests.engine.test_shipped_replay import REPO, SHIPPED, WATCHED, anti_diagonal


@pytest.mark.usefixtures("one_torch_thread")
def test_the_heads_page_replays_the_shipped_training(monkeypatch):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(REPO / "checkpoints"))
    at = open_page("pages/heads.py", model="toy-reverse", h_sentence=WATCHED, h_view="replay")
    snapshots = load_snapshots(SHIPPED)
    frame = chart(at, "heads_replay")
    assert frame["data"][0]["meta"]["step"] == snapshots[-1].step, "opens on the last snapshot"
    assert anti_diagonal(plotly_array(frame["data"][0]["z"])) > 0.9
    assert not any("continued an already trained model" in c.value for c in at.caption), "trained from scratch"
    at.select_slider(key="hr_step").set_value(0).run()
    frame = chart(at, "heads_replay")
    assert frame["data"][0]["meta"]["step"] == 0 and anti_diagonal(plotly_array(frame["data"][0]["z"])) < 0.5
