"""Input the model's vocabulary mostly does not know (Korean into an English→German model) gets a note, computed
in the engine (`Translation.unknown_share`) and shown by the command line and the Translate page."""

from __future__ import annotations

import json
import shutil

import pytest

from explorer.checkpoint import load_checkpoint, source_language
from explorer.cli import main
from explorer.inference import MOSTLY_UNKNOWN, translate
from explorer.tokenizer import unknown_share
from tests.apptest_helpers import open_page

KOREAN = "한국어 문장"
ENGLISH = "a small child sees the red dog ."


def test_unknown_share_counts_the_pieces_that_carry_text():
    assert unknown_share(["▁", "<unk>", "▁", "<unk>", ".", "</s>"]) == pytest.approx(2 / 3)
    assert unknown_share(["▁a", "▁dog", "</s>"]) == 0.0
    assert unknown_share(["</s>"]) == 0.0


def test_a_translation_knows_its_input_is_mostly_unknown(words_checkpoint):
    loaded = load_checkpoint(words_checkpoint)
    korean, english = translate(loaded.model, loaded.tokenizer, [KOREAN, ENGLISH])
    assert korean.unknown_share == 1.0 and korean.mostly_unknown
    assert english.unknown_share < MOSTLY_UNKNOWN and not english.mostly_unknown


def test_source_language_follows_the_corpus_and_init_from():
    assert source_language({"data": "multi30k"}) == "en"
    assert source_language({"data": "reverse"}) is None and source_language({}) is None
    assert source_language({"data": "x.tsv", "initialised_from": {"metadata": {"data": "multi30k"}}}) == "en"


@pytest.fixture
def english_reader(words_checkpoint, tmp_path):
    """The words fixture, saying it was trained on Multi30k (English source)."""
    path = tmp_path / "words-en"
    shutil.copytree(words_checkpoint, path)
    config = json.loads((path / "config.json").read_text())
    config["metadata"]["data"] = "multi30k"
    (path / "config.json").write_text(json.dumps(config))
    return path


def test_the_cli_notes_it(english_reader, words_checkpoint, capsys):
    assert main(["translate", "-c", str(english_reader), ENGLISH, KOREAN]) == 0
    err = capsys.readouterr().err
    assert "line 1" not in err
    assert (
        f"warning: line 2: 100% of its pieces are unknown to the model's vocabulary; this model reads English, "
        f"so the translation is likely meaningless: {KOREAN!r}" in err
    )
    assert main(["translate", "-c", str(words_checkpoint), KOREAN]) == 0
    assert "it is probably in a language the model was not trained on" in capsys.readouterr().err


def _warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_the_translate_page_notes_it(checkpoint_root):
    at = open_page("pages/translate.py", model="words-fixture", sentence=KOREAN)
    assert any("100% of its pieces) is unknown to the model's vocabulary" in w for w in _warnings(at)), _warnings(at)
    at = open_page("pages/translate.py", model="words-fixture", sentence=ENGLISH)
    assert not any("unknown to" in w for w in _warnings(at))


def test_the_translate_page_names_the_language_in_korean(checkpoint_root, monkeypatch):
    monkeypatch.setattr("ui.translate.result.source_language", lambda metadata: "en")
    at = open_page("pages/translate.py", model="words-fixture", sentence=KOREAN, lang="ko")
    assert any(w.startswith("이 모델은 영어를 읽는데") for w in _warnings(at)), _warnings(at)
