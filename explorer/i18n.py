"""Message catalogue: every string a user sees goes through here (English source text as the msgid).

Korean lives in `explorer/locale/ko/LC_MESSAGES/*.po` (standard gettext; Babel reads and checks them), one
file per part of the app (pages, figures, tour, ...) so that parts can be translated independently.
The engine never imports streamlit, so the translator is a plain function of the language code; figure
builders take `lang` as an argument and stay pure. The app's per-session language lives in `ui/i18n.py`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

LANGUAGES: tuple[str, ...] = ("en", "ko")
DEFAULT_LANGUAGE = "en"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


def normalize_language(code: str | None) -> str:
    """'ko-KR', 'ko_KR', 'KO' -> 'ko'; anything unknown -> the default language."""
    if not code:
        return DEFAULT_LANGUAGE
    base = str(code).strip().replace("_", "-").split("-")[0].lower()
    return base if base in LANGUAGES else DEFAULT_LANGUAGE


@functools.cache
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


# ---- Checking the catalogue: which messages used in the code have no Korean -----------------------------

KEYWORDS = {"t": None, "translate": None}  # the first argument is the message (babel.cfg documents the same)
REPO_ROOT = Path(__file__).resolve().parent.parent
MAPPING_FILE = REPO_ROOT / "babel.cfg"
_SOURCE_DIRS = ("main_script", "pages", "ui", "explorer")


def used_messages(root: Path = REPO_ROOT) -> dict[str, list[str]]:
    """Every literal message passed to `t(...)` or `translate(...)` in the files babel.cfg maps, with where
    it is used ("pages/translate.py:12"). Calls with a computed message are not seen (nor extractable)."""
    from babel.messages.extract import extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    with MAPPING_FILE.open() as handle:
        method_map, options_map = parse_mapping_cfg(handle, str(MAPPING_FILE))

    def wanted(dirpath: str) -> bool:  # only the app's own code: never .venv, tests or run folders
        parts = Path(dirpath).resolve().relative_to(root.resolve()).parts
        return not parts or (parts[0] in _SOURCE_DIRS and not any(p.startswith((".", "_")) for p in parts))

    found: dict[str, list[str]] = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
        root, method_map, options_map, keywords=KEYWORDS, directory_filter=wanted
    ):
        if isinstance(message, str) and message:
            found.setdefault(message, []).append(f"{filename}:{lineno}")
    return found


def missing(lang: str = "ko", root: Path = REPO_ROOT) -> dict[str, list[str]]:
    """Messages used in the code with no translation in `lang`'s .po files, with where they are used."""
    table = _catalogue(normalize_language(lang))
    return {message: where for message, where in sorted(used_messages(root).items()) if message not in table}


def _main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m explorer.i18n", description="Check the message catalogue against the code."
    )
    parser.add_argument("command", choices=["check"], help="list the messages used in the code with no Korean")
    parser.add_argument("--lang", default="ko")
    args = parser.parse_args(argv)
    gaps = missing(args.lang)
    for message, where in gaps.items():
        print(f"{where[0]}: {message!r}" + (f" (+{len(where) - 1} more)" if len(where) > 1 else ""))
    print(f"{len(gaps)} message(s) with no {args.lang} translation")
    return 1 if gaps else 0


if __name__ == "__main__":
    raise SystemExit(_main())
