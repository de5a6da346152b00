"""Every text of the tour has its Korean in the catalogue, with the same {placeholders}."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from explorer.i18n import _catalogue, gettext_for, translate
from explorer.tour import numbers
from explorer.tour.stops import STOPS

REPO = Path(__file__).resolve().parents[2]
# ../shared/GLOSSARY.md: "kept in English".
KEPT_IN_ENGLISH = {"Feed forward", "Feed-forward network", "Scaled dot-product attention"}
SOURCES = [
    "ui/tour/sections.py",
    "ui/tour/model_stops.py",
    "ui/tour/paper_stops.py",
    "ui/tour/context.py",
    "ui/tour/exercises.py",
    "explorer/figures/architecture.py",
    "explorer/figures/tour_attention.py",
    "explorer/figures/tour_embeddings.py",
    "explorer/figures/tour_training.py",
    "explorer/claims.py",
]


def literal_messages() -> list[str]:
    """The first argument of every t("...") / translate("...") call in the tour's files."""
    found = []
    for name in SOURCES:
        for node in ast.walk(ast.parse((REPO / name).read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) in ("t", "translate")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.append(node.args[0].value)
    return found


def exercise_messages() -> list[str]:
    """Question and explanation of every exercise (the 3rd and 6th argument of each Exercise(...)); an
    explanation chosen from a value (`a if ... else b`, assigned to `explanation`) counts with both texts."""
    tree = ast.parse((REPO / "explorer/tour/exercises.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Exercise":
            found += [a.value for a in (node.args[2], node.args[5]) if isinstance(a, ast.Constant)]
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "explanation":
            branches = (node.value.body, node.value.orelse) if isinstance(node.value, ast.IfExp) else (node.value,)
            found += [b.value for b in branches if isinstance(b, ast.Constant)]
    return found


def all_messages() -> list[str]:
    stops = [text for s in STOPS for text in (s.title, s.section, s.text)]
    return sorted(set(literal_messages() + exercise_messages() + stops + list(numbers.BLOCK_LABELS.values())))


def test_the_scan_finds_the_tour_texts():
    messages = all_messages()
    assert len(exercise_messages()) == 20 and "Check" in messages and STOPS[4].text in messages


@pytest.mark.parametrize("message", all_messages())
def test_every_tour_text_has_korean_with_the_same_placeholders(message):
    # Some texts stay as they are in Korean (the glossary keeps "Add & Norm", "Table 1", "Section 3.5" in
    # English), but every one must be in the catalogue.
    assert message in _catalogue("ko"), f"no Korean for {message!r}"
    korean = gettext_for("ko")(message)
    assert (
        re.search(r"[\uac00-\ud7a3]", korean)
        or message in KEPT_IN_ENGLISH
        or not re.search(r"\b[a-z]{4,}\b", re.sub(r"\{\w*\}", "", message))
    ), f"{message!r} has English words but its Korean has no Hangul: {korean!r}"
    assert sorted(re.findall(r"\{(\w*)\}", korean)) == sorted(re.findall(r"\{(\w*)\}", message))


def test_glossary_terms_in_the_tour():
    assert translate("Encoder-decoder attention", "ko").startswith("인코더-디코더 어텐션")
    assert translate("Decoder self-attention (masked)", "ko") == "마스킹된 디코더 셀프 어텐션"
    assert translate("Tour of the paper", "ko") == "논문 둘러보기"
