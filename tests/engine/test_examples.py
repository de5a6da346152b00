"""Example sentences per checkpoint (explorer/examples.py, issue 15.8)."""

import json
from pathlib import Path

import pytest

from explorer.examples import GENERIC_EXAMPLES, MAX_EXAMPLES, examples_for, load_examples

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "checkpoints" / "multi30k-en-de"


def test_shipped_checkpoint_offers_its_own_in_domain_examples():
    found = load_examples(SHIPPED)
    assert found.from_checkpoint and found.problem is None
    assert 3 <= len(found.sentences) <= MAX_EXAMPLES
    assert set(found.sentences).isdisjoint(GENERIC_EXAMPLES)
    assert examples_for(SHIPPED) == list(found.sentences)
    # Multi30k describes images: people, animals, streets.
    text = " ".join(found.sentences).lower()
    assert any(word in text for word in ("man", "woman", "children", "people"))
    assert any(word in text for word in ("dog", "horse"))
    assert "street" in text


def test_checkpoint_without_examples_gets_the_generic_ones(tmp_path):
    found = load_examples(tmp_path)
    assert found.sentences == GENERIC_EXAMPLES and not found.from_checkpoint and found.problem is None
    assert examples_for(ROOT / "checkpoints" / "toy-reverse") == list(GENERIC_EXAMPLES)


def test_examples_in_another_source_language(tmp_path):
    (tmp_path / "examples.json").write_text(json.dumps({"de": ["Ein Hund läuft."]}), encoding="utf-8")
    assert examples_for(tmp_path, "de") == ["Ein Hund läuft."]
    assert examples_for(tmp_path, "en") == list(GENERIC_EXAMPLES)


@pytest.mark.parametrize(
    "content, reason",
    [
        ("{not json", "could not be read"),
        (b"\xff\xfe\x00bad", "could not be read"),
        (json.dumps(["A list, not an object."]), 'no "en" list'),
        (json.dumps({"de": ["Nur Deutsch."]}), 'no "en" list'),
        (json.dumps({"en": "one string, not a list"}), "expected 1 to"),
        (json.dumps({"en": []}), "expected 1 to"),
        (json.dumps({"en": ["fine", 3]}), "expected 1 to"),
        (json.dumps({"en": ["fine", "   "]}), "expected 1 to"),
        (json.dumps({"en": ["x" * 1000]}), "expected 1 to"),
        (json.dumps({"en": ["s"] * (MAX_EXAMPLES + 1)}), "expected 1 to"),
    ],
)
def test_a_bad_file_gives_the_generic_list_and_says_why(tmp_path, content, reason):
    path = tmp_path / "examples.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    found = load_examples(tmp_path)
    assert found.sentences == GENERIC_EXAMPLES and not found.from_checkpoint
    assert found.problem is not None and reason in found.problem and "examples.json" in found.problem
    assert examples_for(tmp_path) == list(GENERIC_EXAMPLES)


def test_the_message_comes_in_korean(tmp_path):
    (tmp_path / "examples.json").write_text("{}", encoding="utf-8")
    problem = load_examples(tmp_path, lang="ko").problem
    assert problem is not None and "문장" in problem and "examples.json" in problem


def test_a_folder_named_examples_json_is_not_a_crash(tmp_path):
    (tmp_path / "examples.json").mkdir()
    assert examples_for(tmp_path) == list(GENERIC_EXAMPLES)
