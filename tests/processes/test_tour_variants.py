"""Table 3 row (A) on this machine: the tour starts a tiny base (8 heads) and a one-head variant, each in its
own process, and reads their loss curves while they train."""

from __future__ import annotations

from explorer.tour.variants import HEADS, start_variants, variant_curves
from explorer.training.launcher import RunManager


def test_variants_train_in_their_own_processes(tmp_path):
    manager = RunManager(tmp_path, max_jobs=2, threads=1)
    names = start_variants(manager, steps=20)
    assert len(names) == 2 and len(set(names)) == 2
    # Started, not finished: start_variants returns while the processes train.
    assert any(manager.snapshot(n).live for n in names) or all(manager.snapshot(n).step > 0 for n in names)
    for name in names:
        assert manager.wait(name, timeout=300).status == "finished", manager.snapshot(name).log
    curves = variant_curves(manager, names)
    assert [c.n_heads for c in curves] == list(HEADS)
    for curve in curves:
        assert curve.steps and curve.steps[-1] == 20 and len(curve.losses) == len(curve.steps)
        assert curve.losses[-1] < curve.losses[0], "the loss falls while the variant trains"
