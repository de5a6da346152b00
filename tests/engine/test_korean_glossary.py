"""The Korean catalogue speaks the glossary's terms (../shared/GLOSSARY.md, as the Korean reviews write them) and
the strings a Korean lecturer saw in English now have Korean."""

from __future__ import annotations

import re

import pytest

from explorer.data import TASKS, task_description
from explorer.i18n import LOCALE_DIR, translate

# Term a Korean string used -> the glossary's term for it.
NOT_GLOSSARY = {
    "하위 레이어": "서브 레이어 (sub-layer)",
    "프로젝션": "투영 (projection)",
    "거리 k": "오프셋 k",
    "장난감": "간단한 합성 과제 (toy task)",
    "기울기가 사라": "기울기 소실 (vanishing gradient)",
    "기울기는 0으로": "기울기 소실 (vanishing gradient)",
    "그리디 탐색": "그리디 디코딩 (one spelling of greedy)",
    "탐욕": "그리디 디코딩 (one spelling of greedy)",
    "라이브": "a Korean word (Figure 1, 이 문장으로)",
}
# "(FFN)이라는", "(FFN)과": a particle chosen for the English word inside the brackets reads wrong either way.
PARTICLE_AFTER_BRACKET = re.compile(r"\(FFN\)(?:이|가|을|를|은|는|과|와|라는|이라는|의)")
# English left inside a Korean string, beside Hangul (not a term the glossary keeps in English).
ENGLISH_IN_KOREAN = re.compile(r"\b(?:greedy|Greedy|left|right)\b")


def korean_strings() -> list[tuple[str, str, str]]:
    """(file, msgid, msgstr) for every translated message."""
    from babel.messages.pofile import read_po

    found = []
    for po in sorted((LOCALE_DIR / "ko" / "LC_MESSAGES").glob("*.po")):
        with po.open("rb") as handle:
            for message in read_po(handle, locale="ko"):
                if message.id and message.string:
                    found.append((po.name, str(message.id), str(message.string)))
    return found


def test_the_catalogue_uses_the_glossarys_terms():
    wrong = [
        f"{name}: {term!r} (glossary: {NOT_GLOSSARY[term]}) in {text[:80]!r}"
        for name, _, text in korean_strings()
        for term in NOT_GLOSSARY
        if term in text
    ]
    wrong += [f"{name}: particle after '(FFN)' in {text[:80]!r}" for name, _, text in korean_strings()
              if PARTICLE_AFTER_BRACKET.search(text)]  # fmt: skip
    wrong += [
        f"{name}: English {match.group()!r} beside Korean in {text[:80]!r}"
        for name, _, text in korean_strings()
        if re.search("[\uac00-\ud7a3]", text)
        and (match := ENGLISH_IN_KOREAN.search(re.sub(r"\*[^*]+\*|\{[^}]*\}", "", text)))
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "english",
    [
        *(task_description(task) for task in TASKS),  # Train's task description
        "source sentence",  # Train's data preview headers
        "target sentence",
        "softmax",  # Step by step's table header
        "Offset k",
        "Section 3.2.1, Eq. 1, Figure 2 (left)",
        "Figure 1, live",
        "Scaled dot-product attention",  # stop 2's title
        "Cross",  # "Cross · 레이어 3"
        "{name} ({status})",  # the Train run picker's live label
    ],
)
def test_strings_seen_in_english_have_korean(english):
    korean = translate(english, "ko")
    assert korean != english or "{" in english, english
    assert re.search("[\uac00-\ud7a3]", korean) or "{" in english, korean
