"""The Train page continues the loaded model (an imported one here): with the switch on, the run gets that
checkpoint's tokenizer and configuration and starts from its weights (`init_from`)."""

from __future__ import annotations

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.marian.importer import import_marian
from explorer.training.launcher import RunManager
from tests.apptest_helpers import open_page
from tests.marian.models import build_marian

NAME = "opus-mt-continued"


@pytest.fixture(scope="module")
def imported(tmp_path_factory, one_torch_thread):
    root = tmp_path_factory.mktemp("checkpoints")
    built = build_marian(tmp_path_factory.mktemp("hf") / "hf", seed=4)
    return root, import_marian(built.path, root / NAME)


def test_train_page_continues_the_loaded_model(imported, tmp_path, monkeypatch):
    root, folder = imported
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    monkeypatch.setenv("EXPLORER_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr("ui.train.start.estimate_section", lambda *args: None)  # it times real steps: not here
    started = {}

    def start_new(self, name, **options):
        started.update(options, name=name)
        return name

    monkeypatch.setattr(RunManager, "start_new", start_new)
    at = open_page("pages/train.py", model=NAME, lang="en")
    assert not at.error, [e.value for e in at.error]
    at.toggle(key="train_continue").set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.button(key="train_start").click().run()
    assert not at.exception, [e.message for e in at.exception]
    checkpoint_config = started["model_config"]
    assert started["init_from"] == str(folder)
    assert checkpoint_config.activation == "swish" and checkpoint_config.position_layout == "split"
    assert started["tokenizer"].files() == load_checkpoint(folder).tokenizer.files()
    assert started["metadata"]["initialised_from"]["path"] == str(folder)


def test_the_switch_reads_in_korean(imported, tmp_path, monkeypatch):
    root, _ = imported
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    monkeypatch.setenv("EXPLORER_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr("ui.train.start.estimate_section", lambda *args: None)
    at = open_page("pages/train.py", model=NAME, lang="ko")
    label = at.toggle(key="train_continue").label  # the name escaped for markdown
    assert label.startswith("불러온 모델 opus") and label.endswith("continued을(를) 이어서 학습"), label
