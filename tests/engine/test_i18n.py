"""The message catalogue (explorer/i18n.py, explorer/locale/ko/LC_MESSAGES/*.po): Korean complete and consistent.

`test_every_message_used_in_the_code_has_korean` extracts the messages the way babel.cfg says (first argument
of `t(...)` and `translate(...)` in app.py, pages/, ui/, explorer/); `python -m explorer.i18n check` prints
the same list.
"""

import string
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from explorer.i18n import LOCALE_DIR, gettext_for, missing, normalize_language, translate, used_messages

PO_FILES = sorted((LOCALE_DIR / "ko" / "LC_MESSAGES").glob("*.po"))
RESERVED = {"message", "lang"}  # translate()'s own parameters cannot be placeholders


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def _entries() -> list[tuple[str, str, str, bool]]:
    """(file, msgid, msgstr, fuzzy) for every message of every Korean .po file."""
    out = []
    for po in PO_FILES:
        with po.open("rb") as handle:
            catalog = read_po(handle, locale="ko")
        out += [(po.name, str(m.id), str(m.string), bool(m.fuzzy)) for m in catalog if m.id]
    return out


def test_there_are_korean_catalogues():
    assert PO_FILES, f"no .po files under {LOCALE_DIR / 'ko' / 'LC_MESSAGES'}"
    assert "figures.po" in {p.name for p in PO_FILES}


@pytest.mark.parametrize("po", PO_FILES, ids=lambda p: p.name)
def test_every_message_has_korean_with_the_same_placeholders(po: Path):
    problems = []
    for name, msgid, msgstr, fuzzy in _entries():
        if name != po.name:
            continue
        if not msgstr.strip() or fuzzy:
            problems.append(f"no Korean (or fuzzy): {msgid!r}")
            continue
        try:
            ids, strs = _placeholders(msgid), _placeholders(msgstr)
        except ValueError as err:  # an unbalanced brace would break str.format at run time
            problems.append(f"bad braces in {msgid!r} / {msgstr!r}: {err}")
            continue
        if ids != strs:
            problems.append(f"placeholders differ: {msgid!r} {sorted(ids)} vs {msgstr!r} {sorted(strs)}")
        if ids & RESERVED:
            problems.append(f"placeholder named like a translate() parameter: {msgid!r}")
    assert not problems, f"{po.name}:\n" + "\n".join(problems)


def test_no_message_has_two_different_translations():
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for name, msgid, msgstr, _ in _entries():
        if msgid in seen and seen[msgid][1] != msgstr:
            clashes.append(f"{msgid!r}: {seen[msgid][0]} says {seen[msgid][1]!r}, {name} says {msgstr!r}")
        seen.setdefault(msgid, (name, msgstr))
    assert not clashes, "\n".join(clashes)


def test_every_message_used_in_the_code_has_korean():
    gaps = missing("ko")
    assert not gaps, f"{len(gaps)} message(s) with no Korean:\n" + "\n".join(
        f"{where[0]}: {message!r}" for message, where in gaps.items()
    )


def test_extraction_sees_both_keywords():
    used = used_messages()
    places = {place.split(":")[0] for where in used.values() for place in where}
    assert "explorer/figures/attention.py" in places  # translate(...)
    assert any(place.startswith("pages/") for place in places)  # t(...)
    assert "Head {n}" in used and "query" in used


@pytest.mark.parametrize(
    "code, expected",
    [
        ("ko", "ko"),
        ("ko-KR", "ko"),
        ("ko_KR", "ko"),
        ("KO", "ko"),
        (" ko-kr ", "ko"),
        ("en", "en"),
        ("en-US", "en"),
        ("en_GB", "en"),
        ("de", "en"),
        ("fr-FR", "en"),
        ("", "en"),
        (None, "en"),
        ("kor", "en"),
        ("x-ko", "en"),
    ],
)
def test_normalize_language(code, expected):
    assert normalize_language(code) == expected


def test_translate_fills_placeholders_in_both_languages():
    assert translate("Head {n}", "en", n=3) == "Head 3"
    assert translate("Head {n}", "ko", n=3) == "헤드 3"
    assert translate("Head {n}", "ko-KR", n=3) == "헤드 3"
    assert translate("not in any catalogue {x}", "ko", x=1) == "not in any catalogue 1"  # falls back to English
    assert gettext_for("ko")("weight") == "가중치" and gettext_for("en")("weight") == "weight"


def _filled(text: str) -> str:
    """`text` with its placeholders filled as the app fills them: a percentage where the format asks for one."""
    import re

    return re.sub(r"\{[^{}:]*(?::([^{}]*))?\}", lambda m: "42%" if (m.group(1) or "").endswith("%") else "word", text)


def test_korean_emphasis_renders_where_the_english_does():
    """CommonMark closes `**` only when it is not wedged between punctuation and a letter: `**(attention)**과`
    or `**42%**를` (a particle right after the mark) show their asterisks in the Korean UI while the English
    renders bold. Streamlit's markdown follows CommonMark; markdown-it-py (a dependency of rich, which Streamlit
    uses) applies the same rules here."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    shown = [
        (name, msgid[:50], msgstr)
        for name, msgid, msgstr, _ in _entries()
        if "*" in msgid and md.renderInline(_filled(msgid)).count("*") < md.renderInline(_filled(msgstr)).count("*")
    ]
    assert not shown, shown
