"""Table 3's rows on this machine: the tour starts a row's pair (here row A: a tiny base with 8 heads and a
one-head variant), each in its own process, reads their loss curves while they train, and finds the pair again
from the runs folder alone (a reloaded page)."""

from __future__ import annotations

from explorer.tour.variants import ROWS, newest_pair, start_row, variant_curves
from explorer.training.launcher import RunManager


def test_variants_train_in_their_own_processes(tmp_path):
    manager = RunManager(tmp_path, max_jobs=2, threads=1)
    assert newest_pair(manager, "A") == []
    names = start_row(manager, "A", steps=20)
    assert len(names) == 2 and len(set(names)) == 2
    # Started, not finished: start_row returns while the processes train.
    assert any(manager.snapshot(n).live for n in names) or all(manager.snapshot(n).step > 0 for n in names)
    assert newest_pair(RunManager(tmp_path), "A") == names and newest_pair(manager, "B") == []
    for name in names:
        assert manager.wait(name, timeout=300).status == "finished", manager.snapshot(name).log
    curves = variant_curves(manager, "A", names)
    assert [c.label for c in curves] == [v.label for v in ROWS["A"].variants]
    for curve in curves:
        assert curve.steps and curve.steps[-1] == 20 and len(curve.losses) == len(curve.steps)
        assert curve.losses[-1] < curve.losses[0], "the loss falls while the variant trains"
