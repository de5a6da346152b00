"""The shipped toy-reverse model carries the attention snapshots and loss curve of its whole training, from
random weights to the anti-diagonal, so the Heads page replays attention forming at first look,
small enough to ship."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.training.snapshots import SNAPSHOT_JSON, SNAPSHOT_NPZ, load_snapshots
from tests.apptest_helpers import chart, open_page, plotly_array

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "checkpoints" / "toy-reverse"
WATCHED = "a b c d e f g h"


def anti_diagonal(weights: np.ndarray) -> float:
    """Mean weight on the cell that reversal needs: output i (of the 8 letters) looks at input 7 - i."""
    return float(np.mean([weights[i, 7 - i] for i in range(8)]))


def test_the_shipped_model_ships_its_training_replay():
    snapshots = load_snapshots(SHIPPED)
    steps = [s.step for s in snapshots]
    assert steps[0] == 0 and len(steps) >= 10 and steps == sorted(set(steps)), steps
    assert snapshots[-1].samples[0].source == WATCHED
    first, last = snapshots[0].samples[0], snapshots[-1].samples[0]
    assert last.output == "h g f e d c b a", last.output
    top = load_checkpoint(SHIPPED).config.n_decoder_layers - 1
    # Learned, not there from the start: random weights spread attention, the trained top layer reverses.
    assert all(anti_diagonal(last.cross_attention[top, h]) > 0.9 for h in range(last.cross_attention.shape[1]))
    assert all(anti_diagonal(first.cross_attention[top, h]) < 0.5 for h in range(first.cross_attention.shape[1]))
    history = load_checkpoint(SHIPPED).training["history"]
    assert history["step"] == sorted(history["step"]) and history["step"][-1] >= steps[-1]
    assert len(history["loss"]) == len(history["step"]) and history["loss"][-1] < history["loss"][0]
    size = sum((SHIPPED / name).stat().st_size for name in (SNAPSHOT_NPZ, SNAPSHOT_JSON))
    assert size < 2**20, f"snapshots take {size / 2**20:.1f} MiB"


@pytest.mark.usefixtures("one_torch_thread")
def test_the_heads_page_replays_the_shipped_training(monkeypatch):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(REPO / "checkpoints"))
    at = open_page("pages/heads.py", model="toy-reverse", h_sentence=WATCHED)
    snapshots = load_snapshots(SHIPPED)
    frame = chart(at, "heads_replay")
    assert frame["data"][0]["meta"]["step"] == snapshots[-1].step, "opens on the last snapshot"
    assert anti_diagonal(plotly_array(frame["data"][0]["z"])) > 0.9
    assert not any("continued an already trained model" in c.value for c in at.caption), "trained from scratch"
    at.select_slider(key="hr_step").set_value(0).run()
    frame = chart(at, "heads_replay")
    assert frame["data"][0]["meta"]["step"] == 0 and anti_diagonal(plotly_array(frame["data"][0]["z"])) < 0.5
