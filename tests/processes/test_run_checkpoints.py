"""Two runs started under one name save two models: each run's checkpoint is named after the run's own final
name, and a save never replaces a checkpoint another run made (it takes the next free name)."""

from __future__ import annotations

import threading

import pytest

from explorer.checkpoint import is_checkpoint, load_checkpoint
from explorer.training.launcher import RunManager
from tests.tiny_task import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_two_runs_under_one_automatic_name_save_two_models(tmp_path, tiny_task):
    """Two sessions started 'reverse-tiny' at once; both models used to go to checkpoints/reverse-tiny."""
    train, val, tokenizer, config = tiny_task
    manager, checkpoints = RunManager(tmp_path / "runs"), tmp_path / "checkpoints"
    names: list[str] = []

    def start(seed: int) -> None:
        names.append(
            manager.start_new(
                "reverse-tiny",
                model_config=config,
                train_config=tiny_train_config(steps=4, seed=seed),
                tokenizer=tokenizer,
                train=train,
                val=val,
                save_in=checkpoints,
                unique=True,  # the page's automatic name
            )
        )

    threads = [threading.Thread(target=start, args=(seed,)) for seed in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(names) == ["reverse-tiny", "reverse-tiny-2"]
    for name in names:
        snap = manager.wait(name, 180)
        assert snap.status == "finished", (snap.error, snap.log)
        assert snap.saved == ((str(checkpoints / name), 4),)
    models = {name: load_checkpoint(checkpoints / name) for name in names}
    assert {name: m.metadata["run"] for name, m in models.items()} == {n: n for n in names}
    first, second = (models[n].model.state_dict() for n in sorted(names))
    assert any(not first[k].equal(second[k]) for k in first), "two runs, two different models"

    # A save of the second run asked for under the first one's name keeps the first one's model.
    assert manager.save("reverse-tiny-2", checkpoints / "reverse-tiny") == "saved"
    assert load_checkpoint(checkpoints / "reverse-tiny").metadata["run"] == "reverse-tiny"
    assert is_checkpoint(checkpoints / "reverse-tiny-2")
    assert manager.snapshot("reverse-tiny-2").saved[-1] == (str(checkpoints / "reverse-tiny-2"), 4)
