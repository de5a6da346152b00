"""The Train page's live state: the run picker follows the run (not the state it had when the page was drawn),
and the smallest synthetic run evaluates early, so its attention snapshots come in its first minute."""

from __future__ import annotations

from pathlib import Path

from explorer.training.run_folder import RunStatus
from explorer.training.train_config import TrainConfig
from explorer.training.trainer import Trainer
from tests.engine.test_training import _setup
from ui.train.state import DEFAULTS


def _status(status: str, step: int) -> RunStatus:
    return RunStatus(
        name="run",
        path=Path("/runs/reverse-1"),
        status=status,
        step=step,
        total_steps=600,
        checkpoint_step=None,
        created=0.0,
        error=None,
        pid=None,
        owner="cli",
    )


def test_a_live_run_is_named_without_a_step_that_would_go_stale():
    from ui.train.watch import run_label

    # The picker stays as drawn while the live view redraws on its own: a step in it went stale at once
    # ("preparing at step 0 of 600" while the run was at step 156).
    assert run_label(_status("running", 156)) == "reverse-1 (training)"
    assert "step" not in run_label(_status("preparing", 0))
    assert run_label(_status("stopped", 156)) == "reverse-1 (stopped at step 156 of 600)"


def test_the_page_reruns_when_the_status_changes():
    from dataclasses import dataclass

    from ui.train.watch import page_signature

    @dataclass
    class Snap:
        status: str
        saved: tuple = ()

    # preparing -> running, and running -> stopping -> stopped: each redraws the picker.
    signatures = {page_signature(Snap(s)) for s in ("preparing", "running", "stopping", "stopped")}  # type: ignore[arg-type]
    assert len(signatures) == 4


def test_early_evaluations_at_10_20_40_80_then_every_eval_every():
    config = TrainConfig(steps=600, eval_every=100, eval_early=True)
    steps = [s for s in range(1, 601) if config.evaluates_at(s)]
    assert steps == [10, 20, 40, 80, 100, 200, 300, 400, 500, 600]
    assert config.evaluation_count() == len(steps)
    plain = TrainConfig(steps=600, eval_every=100)
    assert [s for s in range(1, 601) if plain.evaluates_at(s)] == [100, 200, 300, 400, 500, 600]
    assert plain.evaluation_count() == 6
    assert TrainConfig(steps=250, eval_every=100, eval_early=True).evaluation_count() == 4 + 3  # ..., 200, end


def test_the_synthetic_preset_evaluates_early_and_the_trainer_snapshots_there():
    assert DEFAULTS["synthetic"]["eval_early"] is True
    train, val, tokenizer, config = _setup(n_train=200)
    cfg = TrainConfig(
        steps=40,
        batch_tokens=256,
        warmup_steps=10,
        eval_every=100,
        eval_early=True,
        bleu_sentences=0,
        log_every=10,
        save_every=0,
        device="cpu",
        sample_sentences=(val.source[0],),
    )
    trainer = Trainer(config, cfg, tokenizer, train, val, None)
    trainer.run()
    assert trainer.history["eval_step"] == [10, 20, 40]
