"""The shipped toy-reverse model carries the attention snapshots and loss curve of its whole training, from
random weights to the anti-diagonal, so the Heads page replays attention forming at first look,
small enough to ship (the Heads page's replay of it: tests/app/test_shipped_replay.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explorer.checkpoint import load_checkpoint
from explorer.training.snapshots import SNAPSHOT_JSON, SNAPSHOT_NPZ, load_snapshots

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
