"""Message catalogue: every string a user sees goes through here (English source text as the msgid).

Korean lives in `explorer/locale/ko/LC_MESSAGES/*.po` (standard gettext; Babel reads and checks them), one
file per part of the app (pages, figures, tour, ...) so that parts can be translated independently.
The engine never imports streamlit, so the translator is a plain function of the language code; figure
builders take `lang` as an argument and stay pure. The app's per-session language lives in `ui/i18n.py`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

LANGUAGES: tuple[str, ...] = ("en", "ko")
DEFAULT_LANGUAGE = "en"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


def normalize_language(code: str | None) -> str:
    """'ko-KR', 'ko_KR', 'KO' -> 'ko'; anything unknown -> the default language."""
    if not code:
        return DEFAULT_LANGUAGE
    base = str(code).strip().replace("_", "-").split("-")[0].lower()
    return base if base in LANGUAGES else DEFAULT_LANGUAGE


@functools.lru_cache(maxsize=None)
def _catalogue(lang: str) -> dict[str, str]:
    """msgid -> msgstr for `lang`, merged from every .po file of that language (no compiled .mo to keep in sync)."""
    folder = LOCALE_DIR / lang / "LC_MESSAGES"
    if lang == DEFAULT_LANGUAGE or not folder.is_dir():
        return {}
    from babel.messages.pofile import read_po

    table: dict[str, str] = {}
    for po in sorted(folder.glob("*.po")):
        with po.open("rb") as handle:
            catalog = read_po(handle, locale=lang)
        table.update({str(m.id): str(m.string) for m in catalog if m.id and m.string and not m.fuzzy})
    return table


def gettext_for(lang: str) -> Callable[[str], str]:
    """A `_(msgid) -> text` function for `lang`; an untranslated message falls back to the English text."""
    table = _catalogue(normalize_language(lang))
    return lambda message: table.get(message, message)


def translate(message: str, lang: str = DEFAULT_LANGUAGE, **fields: object) -> str:
    """`message` in `lang`, with `{placeholders}` filled from `fields`."""
    text = gettext_for(lang)(message)
    return text.format(**fields) if fields else text
