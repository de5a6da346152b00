"""Training runs, each in its own process, without Streamlit: the run folder is the only channel. A finished
run saves its model with snapshots; a bound on running runs; names taken atomically (two starts, two runs;
no start deletes another run's folder); stop from another manager and resume from the saved step; a save
asked for after Stop is done; a failing run says why. Also attention snapshots and the step-time estimate."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import is_checkpoint, load_checkpoint
from explorer.training.callbacks import SampleTranslation
from explorer.training.estimate.plan import planned_schedule
from explorer.training.launcher import JobError, RunManager
from explorer.training.run_folder import list_runs, validate_run_name
from explorer.training.schedule import noam_learning_rate
from explorer.training.snapshots import (
    SNAPSHOT_JSON,
    SNAPSHOT_NPZ,
    AttentionSnapshot,
    SnapshotError,
    load_snapshots,
    save_snapshots,
    thin_snapshots,
)
from explorer.training.trainer import TrainConfig
from tests.tiny_task import LONG, tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def start(
    manager: RunManager, name: str, task, *, steps: int, save_in: Path | None = None, unique: bool = False, **overrides
) -> str:
    train, val, tokenizer, config = task
    options = dict(
        steps=steps,
        eval_every=10,
        save_every=10,
        bleu_sentences=5,
        keep_last=1,
        sample_sentences=tuple(val.source[:2]),
    )
    options.update(overrides)
    return manager.start_new(
        name,
        model_config=config,
        train_config=tiny_train_config(**options),
        tokenizer=tokenizer,
        train=train,
        val=val,
        save_in=save_in,
        metadata={"data": "reverse"},
        unique=unique,
    )


def wait_for_step(manager: RunManager, name: str, step: int, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while (snap := manager.snapshot(name)).step < step:
        assert snap.live, f"run ended at step {snap.step} ({snap.status}: {snap.error})\n{snap.log}"
        assert time.monotonic() < deadline, f"run still at step {snap.step} after {timeout} s"
        time.sleep(0.1)


def stop_all(manager: RunManager) -> None:
    for name in manager.live_names():
        manager.stop(name)
    for name in manager.names():
        manager.wait(name, 120)


def test_the_server_side_never_imports_the_training_loop():
    """What the app's server imports to plan, start, watch, stop and save runs leaves the loop to the process."""
    code = (
        "import sys; import explorer.training.launcher, explorer.training.reporter, explorer.training.estimate.plan, "
        "explorer.training.estimate.measure; "
        "loop = sorted(m for m in sys.modules if m in ('explorer.training.trainer', 'torch.distributed')); "
        "print(loop)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "explorer.training.trainer" not in done.stdout, done.stdout


def test_run_names_are_folder_names():
    assert validate_run_name(" reverse-tiny_2.b ") == "reverse-tiny_2.b"
    for bad in ("", "../up", "a/b", ".hidden", "x" * 65, "with space"):
        with pytest.raises(JobError, match="not usable"):
            validate_run_name(bad)


def test_finished_run_saves_checkpoint_with_snapshots(tmp_path, tiny_task):
    manager = RunManager(tmp_path / "runs")
    target = tmp_path / "checkpoints" / "done"
    start(manager, "done", tiny_task, steps=30, save_in=target.parent)
    snap = manager.wait("done", 180)
    assert snap.status == "finished", (snap.error, snap.log)
    assert snap.step == 30 and snap.history["step"][-1] == 30 and len(snap.history["loss"]) == 30
    assert snap.history["eval_step"] == (10, 20, 30)
    assert snap.saved == ((str(target), 30),)
    # Snapshots: the untrained model at step 0, then one per evaluation.
    assert [s.step for s in snap.attention] == [0, 10, 20, 30]
    checkpoint = load_checkpoint(target)
    assert checkpoint.metadata["data"] == "reverse" and checkpoint.metadata["step"] == 30
    assert not (target / "optimizer.safetensors").exists()
    saved = load_snapshots(target)
    assert [s.step for s in saved] == [0, 10, 20, 30]
    for stored in saved:
        for b in stored.samples:
            layers, heads, out, src = b.cross_attention.shape
            assert (layers, heads) == (1, 2) and out == len(b.output_pieces) and src == len(b.source_pieces)
            np.testing.assert_allclose(b.cross_attention.sum(-1), 1.0, atol=1e-2)
    (run,) = list_runs(tmp_path / "runs")
    assert (run.name, run.status, run.checkpoint_step, run.resumable) == ("done", "finished", 30, False)


def test_names_are_taken_atomically_and_runs_are_bounded(tmp_path, tiny_task):
    """Two starts at the same moment get two runs; a taken name is refused and its folder left alone."""
    manager = RunManager(tmp_path, max_jobs=2)
    try:
        names: list[str] = []
        threads = [
            threading.Thread(
                target=lambda: names.append(
                    start(manager, "same", tiny_task, steps=LONG, eval_every=0, save_every=0, unique=True)
                )
            )
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(names) == ["same", "same-2"]
        before = (tmp_path / "same" / "data" / "train.src").read_bytes()
        with pytest.raises(JobError, match="already"):
            start(manager, "same", tiny_task, steps=10)  # a typed name that is taken: refused, never overwritten
        assert (tmp_path / "same" / "data" / "train.src").read_bytes() == before
        with pytest.raises(JobError, match="at most 2 run at once"):
            start(manager, "third", tiny_task, steps=10)
        assert not (tmp_path / "third").exists(), "a refused run must leave no folder behind"
        assert sorted(manager.live_names()) == ["same", "same-2"]
    finally:
        stop_all(manager)
    assert {manager.snapshot(n).status for n in ("same", "same-2")} == {"stopped"}


def test_a_start_never_deletes_a_folder_it_did_not_make(tmp_path, tiny_task):
    """Old `start_new` wrote into a folder that another start was still preparing, and deleted it on refusal."""
    other = tmp_path / "busy"
    (other / "data").mkdir(parents=True)
    (other / "data" / "train.src").write_text("another run's corpus\n")
    manager = RunManager(tmp_path, max_jobs=1)
    with pytest.raises(JobError, match="already exists"):
        start(manager, "busy", tiny_task, steps=10)
    assert (other / "data" / "train.src").read_text() == "another run's corpus\n"


def test_stop_from_another_manager_then_resume(tmp_path, tiny_task, monkeypatch):
    """Stop works from any session (a second manager over the same folder) within a step; resume continues."""
    # progress.json after every step, so the step read when asking to stop is the step the run was at
    monkeypatch.setenv("EXPLORER_PROGRESS_S", "0")
    manager = RunManager(tmp_path)
    start(manager, "resumable", tiny_task, steps=LONG, save_every=1000)
    wait_for_step(manager, "resumable", 25)
    other = RunManager(tmp_path)  # another browser session, or `explorer stop`
    assert other.stop("resumable")
    asked_at = manager.snapshot("resumable").step
    stopped = manager.wait("resumable", 120)
    assert stopped.status == "stopped", (stopped.error, stopped.log)
    assert stopped.step - asked_at <= 2, "the run must stop within a step of the request"
    saved_step = json.loads((tmp_path / "resumable" / "latest" / "training.json").read_text())["step"]
    assert saved_step == stopped.step == stopped.checkpoint_step >= 25

    manager.resume("resumable", steps=saved_step + 15)
    resumed = manager.wait("resumable", 180)
    assert resumed.status == "finished", (resumed.error, resumed.log)
    assert resumed.resumed_from == saved_step and resumed.step == saved_step + 15
    assert list(resumed.history["step"]) == list(range(1, saved_step + 16)), "history continues where it stopped"
    assert [s.step for s in resumed.attention][:3] == [0, 10, 20]  # snapshots from before the stop are kept
    with pytest.raises(JobError, match="already at step"):
        manager.resume("resumable")


def test_a_save_asked_for_after_stop_is_not_lost(tmp_path, tiny_task):
    manager = RunManager(tmp_path / "runs")
    start(manager, "saver", tiny_task, steps=LONG, save_every=0, eval_every=0)
    wait_for_step(manager, "saver", 3)
    assert manager.save("saver", tmp_path / "copy") == "queued"
    manager.stop("saver")
    manager.save("saver", tmp_path / "after-stop")  # queued while stopping, or done at once if already stopped
    stopped = manager.wait("saver", 120)
    assert stopped.status == "stopped"
    deadline = time.monotonic() + 30
    while len(manager.snapshot("saver").saved) < 2:
        assert time.monotonic() < deadline, manager.snapshot("saver").saved
        time.sleep(0.1)
    assert is_checkpoint(tmp_path / "copy") and is_checkpoint(tmp_path / "after-stop")
    assert load_checkpoint(tmp_path / "after-stop").metadata["step"] == stopped.step
    assert manager.save("saver", tmp_path / "later") == "saved"
    assert load_checkpoint(tmp_path / "later").metadata["step"] == stopped.step


def test_a_failing_run_says_why(tmp_path, tiny_task):
    train, val, tokenizer, config = tiny_task
    manager = RunManager(tmp_path)
    manager.start_new(
        "broken",
        model_config=config.replace(vocab_size=config.vocab_size + 3),
        tokenizer=tokenizer,
        train=train,
        val=val,
        train_config=TrainConfig(steps=5, device="cpu", max_len=32),
    )
    snap = manager.wait("broken", 120)
    # Said by whichever check meets the mismatch first: the run folder's checkpoint loader or the trainer.
    assert snap.status == "failed" and "pieces but the model" in snap.error and str(config.vocab_size + 3) in snap.error
    assert "Traceback" in snap.log  # the last lines of its log are shown with it
    manager.discard("broken")
    assert manager.snapshot("broken") is None and not (tmp_path / "broken").exists()


def _snapshot(step: int, out: int = 3, src: int = 4) -> AttentionSnapshot:
    weights = np.random.default_rng(step).dirichlet(np.ones(src), size=(2, 2, out)).astype(np.float32)
    sample = SampleTranslation("a b c", "c b a", ["▁a", "▁b", "▁c", "</s>"][:src], ["▁c", "▁b", "</s>"][:out], weights)
    return AttentionSnapshot(step, (sample,))


def test_snapshot_files_hold_no_pickles_and_round_trip(tmp_path):
    snapshots = [_snapshot(0), _snapshot(50)]
    save_snapshots(tmp_path, snapshots)
    with np.load(tmp_path / SNAPSHOT_NPZ, allow_pickle=False) as arrays:  # would raise on an object array
        assert sorted(arrays.files) == ["step0_sentence0", "step50_sentence0"]
        assert arrays["step50_sentence0"].shape == (2, 2, 3, 4)
    labels = json.loads((tmp_path / SNAPSHOT_JSON).read_text(encoding="utf-8"))
    assert [s["step"] for s in labels["snapshots"]] == [0, 50]
    assert labels["snapshots"][1]["samples"][0]["output_pieces"] == ["▁c", "▁b", "</s>"]
    loaded = load_snapshots(tmp_path)
    np.testing.assert_allclose(loaded[1].samples[0].cross_attention, snapshots[1].samples[0].cross_attention, atol=1e-3)
    assert load_snapshots(tmp_path / "nothing-here") == []
    (tmp_path / SNAPSHOT_JSON).write_text('{"format": "something else"}')
    with pytest.raises(SnapshotError, match="not an attention-snapshot file"):
        load_snapshots(tmp_path)


def test_thinning_keeps_first_and_newest():
    snapshots = [_snapshot(s, 1, 1) for s in range(0, 1000, 10)]
    kept = thin_snapshots(snapshots, cap=20)
    steps = [s.step for s in kept]
    assert len(kept) <= 20 and steps[0] == 0 and steps[-1] == 990 and steps == sorted(steps)


def test_planned_schedule_is_eq3_and_includes_the_warmup_peak():
    steps, lrs = planned_schedule(10_000, 512, 4000)
    assert 4000 in steps and steps[0] == 1 and steps[-1] == 10_000
    assert lrs[steps.index(4000)] == pytest.approx(max(lrs))
    assert lrs[10] == pytest.approx(noam_learning_rate(steps[10], 512, 4000))


def test_a_timing_thread_is_niced_and_the_caller_keeps_its_priority():
    import os
    import threading

    from explorer.training.estimate.harness import in_niced_thread

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert in_niced_thread(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), 5) == before + 5
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
    with pytest.raises(ZeroDivisionError):
        in_niced_thread(lambda: 1 / 0, 5)
