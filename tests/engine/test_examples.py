"""Examples: the example sentences each checkpoint offers (explorer/examples.py), and the README's examples
(its command lines parse and name real checkpoints, its links open real pages with real heads, its test
command is the one CI runs)."""

import json
import re
import shlex
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from explorer.checkpoint import read_config
from explorer.cli import build_parser
from explorer.examples import GENERIC_EXAMPLES, MAX_EXAMPLES, beam_example, examples_for, load_examples
from explorer.model.head_mask import HeadMask

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "checkpoints" / "multi30k-en-de"
README = ROOT / "README.md"


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


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"en": ["A dog."], "beam": {"en": "Three women smiling."}}', "Three women smiling."),
        ('{"en": ["A dog."]}', None),  # none shipped: the app searches the examples
        ('{"en": ["A dog."], "beam": {"de": "Drei Frauen."}}', None),
        ('{"en": ["A dog."], "beam": "Three women."}', None),
        ("not json", None),
    ],
)
def test_the_beam_example_is_read_when_usable(tmp_path, content, expected):
    (tmp_path / "examples.json").write_text(content, encoding="utf-8")
    assert beam_example(tmp_path) == expected
    if expected is not None:
        assert load_examples(tmp_path).sentences == ("A dog.",), "the field leaves the examples as they were"


# ---- the README's examples ----------------------------------------------------------------------------------


def _readme_section(heading: str) -> str:
    """The text under `## heading` in README.md, up to the next `## ` heading."""
    text = README.read_text(encoding="utf-8")
    assert f"\n## {heading}\n" in text, f"README.md has no '## {heading}' section"
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _explorer_argv(line: str) -> list[str]:
    """A shell line of the README's command-line block as the arguments after `explorer`: what reads a pipe,
    without a redirection, after `torchrun ... -m explorer`."""
    words = shlex.split(line, comments=True)
    if "|" in words:
        words = words[len(words) - words[::-1].index("|") :]
    if ">" in words:
        words = words[: words.index(">")]
    if words[0] == "torchrun":
        return words[words.index("explorer") + 1 :]
    assert words[0] == "explorer", f"not an explorer command: {line!r}"
    return words[1:]


def _readme_commands() -> list[str]:
    found = re.search(r"```bash\n(.*?)```", _readme_section("Command line"), re.S)
    assert found, "the README's command line section has no bash block"
    return [line for line in found.group(1).replace("\\\n", " ").splitlines() if line.strip()]


@pytest.mark.parametrize("line", _readme_commands())
def test_readme_command_parses_and_names_real_checkpoints(line):
    args = build_parser().parse_args(_explorer_argv(line))  # a wrong flag exits with status 2
    for name in ("checkpoint", "init_from"):
        path = getattr(args, name, None)
        assert path is None or (ROOT / str(path)).is_dir(), f"{line!r}: no checkpoint folder {path}"


def _readme_links() -> list[str]:
    links = re.findall(r"`(/[a-z_]+(?:\?[^`]*)?)`", _readme_section("A 50-minute lecture"))
    links += re.findall(r"`(/[a-z_]+)`", _readme_section("The pages"))
    assert len(links) >= 9, links
    return links


@pytest.mark.parametrize("link", _readme_links())
def test_readme_link_opens_a_real_page_with_real_heads(link):
    parts = urlsplit(link)
    assert (ROOT / "pages" / f"{parts.path.strip('/')}.py").is_file(), f"{link}: no such page"
    query = dict(parse_qsl(parts.query))
    model = ROOT / "checkpoints" / query.get("model", SHIPPED.name)
    assert model.is_dir(), f"{link}: no checkpoint {model.name}"
    if "heads" in query:
        config, _ = read_config(model)
        assert HeadMask.parse(query["heads"], config).off(), f"{link}: switches no head off"


def test_readme_test_command_is_the_one_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = next(line for line in ci.splitlines() if line.startswith("python3 -m venv") and "pytest" in line)
    assert command in _readme_section("Two commands")
