"""A save never replaces a checkpoint another run made: it takes the next free name, atomically; a run's own
earlier save, and a checkpoint the run was started to replace, are replaced."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from explorer.checkpoint import load_checkpoint, save_checkpoint
from explorer.model import Transformer
from explorer.training.reporter import record_saved
from explorer.training.saving import claim_target, claimed_target


def run_folder(root: Path, name: str, **info) -> Path:
    run_dir = root / "runs" / name
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"name": name, "created": 1.0, **info}))
    return run_dir


def save_as(run_dir: Path, target: Path, tiny_task) -> Path:
    """What the training process does for a save: claim, write, record."""
    with claimed_target(run_dir, target) as path:
        save_checkpoint(path, Transformer(tiny_task.config), tiny_task.tokenizer, metadata={"run": run_dir.name})
    record_saved(run_dir, path, 1)
    return path


def test_a_save_that_would_collide_takes_a_new_name(tmp_path, tiny_task):
    target = tmp_path / "checkpoints" / "reverse-tiny"
    first, second = run_folder(tmp_path, "reverse-tiny"), run_folder(tmp_path, "reverse-tiny-2")
    assert save_as(first, target, tiny_task) == target
    assert save_as(second, target, tiny_task) == target.with_name("reverse-tiny-2")
    assert load_checkpoint(target).metadata["run"] == "reverse-tiny", "the first run's model was replaced"
    # A run saving again replaces its own model, not the other's, under the name it got.
    assert save_as(second, target, tiny_task) == target.with_name("reverse-tiny-2")
    assert save_as(first, target, tiny_task) == target
    assert sorted(p.name for p in target.parent.iterdir()) == ["reverse-tiny", "reverse-tiny-2"]


def test_a_checkpoint_that_was_there_before_is_kept_unless_replacing_was_chosen(tmp_path, tiny_task):
    target = tmp_path / "checkpoints" / "mine"
    target.mkdir(parents=True)
    (target / "config.json").write_text("{}")  # a shipped or uploaded model: no run made it
    assert claim_target(run_folder(tmp_path, "a"), target) == target.with_name("mine-2")
    chosen = run_folder(tmp_path, "b", replace=str(target))
    assert save_as(chosen, target, tiny_task) == target
    assert load_checkpoint(target).metadata["run"] == "b"


def test_two_saves_at_the_same_moment_take_two_names(tmp_path):
    target = tmp_path / "checkpoints" / "same"
    runs = [run_folder(tmp_path, f"r{i}") for i in range(4)]
    claimed: list[Path] = []
    threads = [threading.Thread(target=lambda r=r: claimed.append(claim_target(r, target))) for r in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(p.name for p in claimed) == ["same", "same-2", "same-3", "same-4"]


def test_a_failed_save_gives_its_reserved_name_back(tmp_path):
    target = tmp_path / "checkpoints" / "broken"
    try:
        with claimed_target(run_folder(tmp_path, "r"), target):
            raise OSError("No space left on device")
    except OSError:
        pass
    assert not target.exists()
