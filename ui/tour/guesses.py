"""A tour's committed guesses in one URL parameter (`?ex=sqrt_dk:0.9;cross_head:▁dogs`), so a lecturer can
share a link to a class's state, or to one exercise already answered."""

from __future__ import annotations

from urllib.parse import quote, unquote

PAIR, SEPARATOR = ":", ";"


def encode_guesses(guesses: dict[str, str | float]) -> str:
    """{"sqrt_dk": 0.9, "cross_head": "dogs"} -> "sqrt_dk:0.9;cross_head:dogs" (values percent-quoted)."""
    parts = []
    for key, value in guesses.items():
        text = f"{value:g}" if isinstance(value, float) else str(value)
        parts.append(f"{key}{PAIR}{quote(text, safe='')}")
    return SEPARATOR.join(parts)


def decode_guesses(raw: str | None) -> dict[str, str]:
    """The inverse of `encode_guesses`; malformed parts are skipped (the values are checked by each exercise)."""
    result: dict[str, str] = {}
    for part in (raw or "").split(SEPARATOR):
        key, found, value = part.partition(PAIR)
        if found and key:
            result[key] = unquote(value)
    return result
