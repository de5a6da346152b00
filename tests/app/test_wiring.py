"""Engine work wired into the Translate page: the checkpoint's own example sentences, figure text in the page
theme's colour and the session's language, and switching heads off below the main figure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from explorer.figures.theme import PAGE_COLORS
from tests.apptest_helpers import chart, charts, open_page, query_value
from ui.attention_controls import EXAMPLE_CHARS
from ui.markdown import md_escape, shown_value

REPO = Path(__file__).resolve().parents[2]
PAGE = "pages/translate.py"
SHIPPED = "multi30k-en-de"


def example_options(at) -> list[str]:
    """The example buttons' text, as drawn (escaped Markdown)."""
    return list(at.pills(key="sentence_example").options)


def drawn(sentences: list[str]) -> list[str]:
    return [shown_value(s, EXAMPLE_CHARS) for s in sentences]


def translations(at) -> list[str]:
    """The ablation expander's two '###' translations: every head on, then with heads off."""
    (expander,) = [e for e in at.expander if e.label == "Ablate heads"]
    return [m.value.removeprefix("### ") for m in expander.markdown if m.value.startswith("### ")]


@pytest.fixture
def shipped(monkeypatch):
    """The app pointed at the repository's own checkpoints/ folder."""
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(REPO / "checkpoints"))


def test_the_shipped_checkpoint_offers_its_own_examples(shipped, one_torch_thread):
    own = json.loads((REPO / "checkpoints" / SHIPPED / "examples.json").read_text())["en"]
    at = open_page(PAGE, model=SHIPPED)
    assert example_options(at) == drawn(own)
    assert at.text_input(key="sentence").value == own[0], "the first look translates an in-domain sentence"
    assert not at.warning


def test_a_checkpoint_without_examples_keeps_its_kind_and_a_bad_file_says_why(
    checkpoint_root, tmp_path, monkeypatch, one_torch_thread
):
    at = open_page(PAGE, model="reverse-fixture")
    assert example_options(at) == drawn(["a b c d e f g", "h e l l o", "s t e p s", "b a d c a b"])
    shutil.copytree(checkpoint_root / "reverse-fixture", tmp_path / "bad")
    (tmp_path / "bad" / "examples.json").write_text('{"de": ["Ein Hund."]}')
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(tmp_path))
    bad = open_page(PAGE, model="bad", lang="ko")
    assert example_options(bad) == example_options(at), "a file that cannot be used falls back to the kind's list"
    assert md_escape("examples.json") in bad.warning[0].value and "문장" in bad.warning[0].value


def test_figure_text_is_in_the_page_theme_colour_and_the_session_language(checkpoint_root, one_torch_thread):
    at = open_page(PAGE, model="words-fixture", sentence="a small child sees the red dog .", lang="ko")
    figure = chart(at, "translate_head")
    light = PAGE_COLORS["light"]["text"]  # AppTest's browser reports no theme: the light page
    assert figure["layout"]["font"]["color"] == light
    assert figure["layout"]["xaxis"]["tickfont"]["color"] == light
    title = figure["layout"]["title"]["text"]
    assert "인코더-디코더 어텐션" in title and "layer" not in title, title
    assert figure["layout"]["yaxis"]["title"]["text"] != "target produced (query)"


def test_switching_heads_off_on_the_translate_page_changes_the_translation(shipped, one_torch_thread):
    sentence = "A brown horse runs across a green field."
    top = ",".join(f"cross.2.{h}" for h in range(4))
    at = open_page(PAGE, model=SHIPPED, sentence=sentence)
    before = translations(at)
    assert len(before) == 2 and before[0] == before[1], "nothing switched off yet"
    assert query_value(at, "ablate") is None
    for head in range(4):
        at.checkbox(key=f"am_cross_2_{head}").uncheck()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    original, ablated = translations(at)
    assert original == before[0] and ":orange-background[" in ablated, ablated
    assert query_value(at, "ablate") == top
    # Every head of the top cross-attention layer is off: said in words, not drawn as four empty panels.
    assert any("is switched off" in i.value for i in at.info) and not charts(at, "am_remaining")
    # The link alone switches the same heads off (and opens the expander).
    linked = open_page(PAGE, model=SHIPPED, sentence=sentence, ablate=top)
    assert translations(linked) == [original, ablated]
    assert [e for e in linked.expander if e.label == "Ablate heads"][0].proto.expanded


def test_the_korean_catalogue_ships_in_the_wheel():
    """A non-editable install reads its .po files from the package: they must be package data."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["explorer"]
    package = REPO / "explorer"
    catalogues = sorted(package.glob("locale/*/LC_MESSAGES/*.po"))
    shipped = {p for pattern in patterns for p in package.glob(pattern)}
    assert catalogues and set(catalogues) <= shipped


def test_switching_heads_off_on_the_compare_page(checkpoint_root, one_torch_thread):
    at = open_page("pages/compare.py", model="reverse-fixture", c_sentence="a b c d e f g")
    assert len(set(translations(at))) == 1
    for layer in range(2):
        for head in range(2):
            at.checkbox(key=f"cm_cross_{layer}_{head}").uncheck()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    original, ablated = translations(at)
    # Changed words are marked: new ones highlighted, dropped ones struck through.
    assert ":orange-background[" in ablated or ":gray[~~" in ablated, (original, ablated)
    assert query_value(at, "ablate") == "cross.0.0,cross.0.1,cross.1.0,cross.1.1"
