"""The train page's job manager, without Streamlit: one job per name, a bound on running jobs, stop and
resume from the saved step, attention snapshots saved without pickles, and the time-per-step estimate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import is_checkpoint, load_checkpoint
from explorer.config import ModelConfig
from explorer.data import make_splits
from explorer.training.callbacks import SampleTranslation
from explorer.training.datasets import train_tokenizer
from explorer.training.estimates import measure_step_time, planned_schedule
from explorer.training.jobs import JobError, JobManager, find_runs, validate_run_name
from explorer.training.snapshots import (SNAPSHOT_JSON, SNAPSHOT_NPZ, AttentionSnapshot, SnapshotError, load_snapshots,
                                         save_snapshots, thin_snapshots)
from explorer.training.schedule import noam_learning_rate
from explorer.training.trainer import TrainConfig


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def task():
    train, val = make_splits("reverse", 600, 40, seed=0, max_len=6)
    tokenizer = train_tokenizer(train, 64, synthetic=True)
    config = ModelConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                         n_decoder_layers=1, dropout=0.0, max_len=32)
    return train, val, tokenizer, config


def start(manager: JobManager, name: str, root: Path, task, *, steps: int, save_to: Path | None = None,
          **overrides) -> Path:
    train, val, tokenizer, config = task
    options = dict(steps=steps, batch_tokens=256, warmup_steps=20, eval_every=10, save_every=10, log_every=1,
                   bleu_sentences=5, device="cpu", max_len=32, keep_last=1, sample_sentences=tuple(val.source[:2]))
    options.update(overrides)
    run_dir = root / name
    manager.start_new(name, model_config=config, train_config=TrainConfig(**options), tokenizer=tokenizer,
                      train=train, val=val, run_dir=run_dir, save_to=save_to, metadata={"data": "reverse"})
    return run_dir


def wait_for_step(manager: JobManager, name: str, step: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while (snap := manager.snapshot(name)).step < step:
        assert snap.live, f"job ended at step {snap.step} ({snap.status}: {snap.error})"
        assert time.monotonic() < deadline, f"job still at step {snap.step} after {timeout} s"
        time.sleep(0.05)


def stop_all(manager: JobManager) -> None:
    for name in manager.live_names():
        manager.stop(name)
        manager.wait(name, 60)


def test_run_names_are_folder_names():
    assert validate_run_name(" reverse-tiny_2.b ") == "reverse-tiny_2.b"
    for bad in ("", "../up", "a/b", ".hidden", "x" * 65, "with space"):
        with pytest.raises(JobError, match="not usable"):
            validate_run_name(bad)


def test_finished_job_saves_checkpoint_with_snapshots(tmp_path, task):
    manager = JobManager()
    target = tmp_path / "checkpoints" / "done"
    start(manager, "done", tmp_path / "runs", task, steps=30, save_to=target)
    snap = manager.wait("done", 120)
    assert snap.status == "finished", snap.error
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
    for live, stored in zip(snap.attention, saved):
        for a, b in zip(live.samples, stored.samples):
            layers, heads, out, src = b.cross_attention.shape
            assert (layers, heads) == (1, 2) and out == len(b.output_pieces) and src == len(b.source_pieces)
            assert a.output == b.output
            np.testing.assert_allclose(a.cross_attention, b.cross_attention, atol=1e-3)  # float16 on disk
            np.testing.assert_allclose(b.cross_attention.sum(-1), 1.0, atol=1e-2)
    assert [r.name for r in find_runs(tmp_path / "runs")] == ["done"]


def test_one_job_per_name_and_a_bound_on_running_jobs(tmp_path, task):
    manager = JobManager(max_jobs=2)
    try:
        start(manager, "first", tmp_path, task, steps=100_000, eval_every=0, save_every=0)
        wait_for_step(manager, "first", 1)
        with pytest.raises(JobError, match="already training"):
            start(manager, "first", tmp_path, task, steps=10)  # a second job under a running name
        with pytest.raises(JobError, match="already training"):
            manager.start("first", lambda callbacks: None, run_dir=tmp_path / "elsewhere", total_steps=1)
        start(manager, "second", tmp_path, task, steps=100_000, eval_every=0, save_every=0)
        with pytest.raises(JobError, match="at most 2 run at once"):
            start(manager, "third", tmp_path, task, steps=10)
        assert not (tmp_path / "third").exists(), "a refused run must leave no folder behind"
        assert sorted(manager.live_names()) == ["first", "second"]
    finally:
        stop_all(manager)
    assert {manager.snapshot(n).status for n in ("first", "second")} == {"stopped"}
    # With the slots free again, a third run may start.
    start(manager, "third", tmp_path, task, steps=3, eval_every=0)
    assert manager.wait("third", 60).status == "finished"


def test_stop_then_resume_continues_from_the_saved_step(tmp_path, task):
    manager = JobManager()
    run_dir = start(manager, "resumable", tmp_path, task, steps=100_000, save_every=1000)
    wait_for_step(manager, "resumable", 25)
    manager.stop("resumable")
    stopped = manager.wait("resumable", 60)
    assert stopped.status == "stopped"
    saved_step = json.loads((run_dir / "latest" / "training.json").read_text())["step"]
    assert saved_step == stopped.step >= 25
    run = find_runs(tmp_path)[0]
    assert (run.name, run.step, run.finished) == ("resumable", saved_step, False)

    manager.resume("resumable", run_dir, steps=saved_step + 15)
    resumed = manager.wait("resumable", 120)
    assert resumed.status == "finished", resumed.error
    assert resumed.resumed_from == saved_step and resumed.step == saved_step + 15
    steps = list(resumed.history["step"])
    assert steps == list(range(1, saved_step + 16)), "history must continue where the stopped run left off"
    assert [s.step for s in resumed.attention][:3] == [0, 10, 20]  # snapshots from before the stop are kept
    with pytest.raises(JobError, match="already at step"):
        manager.resume("resumable", run_dir)


def test_resume_a_run_left_by_a_dead_process(tmp_path, task):
    """A run directory with latest/ and no job in this process (the app was restarted) can be resumed."""
    first = JobManager()
    run_dir = start(first, "orphan", tmp_path, task, steps=100_000, save_every=5)
    wait_for_step(first, "orphan", 12)
    first.stop("orphan")
    first.wait("orphan", 60)
    step = json.loads((run_dir / "latest" / "training.json").read_text())["step"]

    fresh = JobManager()  # a new process knows nothing of the old job
    fresh.attach("orphan", run_dir)
    shown = fresh.snapshot("orphan")
    assert (shown.status, shown.step, shown.live) == ("stopped", step, False)
    assert shown.history["step"][-1] == step and shown.attention
    fresh.resume("orphan", run_dir, steps=step + 5)
    assert fresh.wait("orphan", 60).step == step + 5


KILLED_RUN = """
import sys, time, torch
torch.set_num_threads(1)
from pathlib import Path
from explorer.config import ModelConfig
from explorer.data import make_splits
from explorer.training.datasets import train_tokenizer
from explorer.training.jobs import JobManager
from explorer.training.trainer import TrainConfig
train, val = make_splits("reverse", 600, 40, seed=0, max_len=6)
tokenizer = train_tokenizer(train, 64, synthetic=True)
config = ModelConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                     n_decoder_layers=1, dropout=0.0, max_len=32)
jobs = JobManager()
jobs.start_new("killed", model_config=config, tokenizer=tokenizer, train=train, val=val, run_dir=Path(sys.argv[1]),
               train_config=TrainConfig(steps=1_000_000, batch_tokens=256, warmup_steps=20, eval_every=7,
                                        save_every=3, log_every=1, bleu_sentences=0, device="cpu", max_len=32,
                                        sample_sentences=(val.source[0],)))
while jobs.snapshot("killed").step < 40:
    time.sleep(0.01)
print("running", flush=True)
time.sleep(60)
"""


def test_a_killed_app_leaves_a_resumable_run(tmp_path):
    """SIGKILL the process mid-run (no clean stop): latest/ is whole and a new process resumes from it."""
    run_dir = tmp_path / "killed"
    repo = Path(__file__).resolve().parents[1]
    process = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(run_dir)], cwd=repo, stdout=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": str(repo)}, text=True)
    try:
        assert process.stdout.readline().strip() == "running"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    (run,) = find_runs(tmp_path)
    assert run.name == "killed" and run.step >= 39 and run.step % 3 == 0 and not run.finished
    load_checkpoint(run_dir / "latest")  # whole and loadable
    fresh = JobManager()
    fresh.resume("killed", run_dir, steps=run.step + 4)
    resumed = fresh.wait("killed", 60)
    assert resumed.status == "finished", resumed.error
    assert (resumed.resumed_from, resumed.step) == (run.step, run.step + 4)
    assert [s.step for s in resumed.attention][:3] == [0, 7, 14]  # snapshots written before the kill


def test_save_while_training_and_after_stopping(tmp_path, task):
    manager = JobManager()
    run_dir = start(manager, "saver", tmp_path, task, steps=100_000, save_every=0, eval_every=0)
    try:
        wait_for_step(manager, "saver", 3)
        assert manager.save("saver", tmp_path / "copy") == "queued"
        deadline = time.monotonic() + 60
        while not manager.snapshot("saver").saved:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert is_checkpoint(tmp_path / "copy")
    finally:
        stop_all(manager)
    assert manager.save("saver", tmp_path / "after") == "saved"
    stopped_step = json.loads((run_dir / "latest" / "training.json").read_text())["step"]
    assert load_checkpoint(tmp_path / "after").metadata["step"] == stopped_step
    with pytest.raises(JobError, match="exists"):
        start(manager, "saver", tmp_path, task, steps=5)  # a fresh start must not overwrite a run


def test_a_failing_job_reports_why(tmp_path):
    manager = JobManager()

    def build(callbacks):
        raise ValueError("tokenizer has 10 pieces but the model config says 20")

    manager.start("broken", build, run_dir=tmp_path / "broken", total_steps=5)
    snap = manager.wait("broken", 30)
    assert snap.status == "failed" and "tokenizer has 10 pieces" in snap.error
    manager.forget("broken")
    assert manager.snapshot("broken") is None


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
    np.testing.assert_allclose(loaded[1].samples[0].cross_attention, snapshots[1].samples[0].cross_attention,
                               atol=1e-3)
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


def test_step_time_is_measured_and_scaled_for_big_batches():
    config = ModelConfig(vocab_size=40, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1,
                         max_len=32)
    full = measure_step_time(config, 256, "cpu")
    assert full.seconds > 0 and not full.scaled and full.describe().startswith("measured: one real")
    scaled = measure_step_time(config, 4096, "cpu", flop_budget=1e6)
    assert scaled.scaled and scaled.measured_tokens < 4096 and "scaled to 4,096 tokens" in scaled.describe()
