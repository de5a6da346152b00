"""How a SentencePiece piece is shown to a reader: without the word-start marker "▁" unless asked for.

The model reads pieces such as "▁Ein", "▁Hund", "e": "▁" (U+2581) says a space came before the piece. On a
slide it reads as noise ("when the decoder produces “▁Schnee”"), so every label and every sentence that
quotes a piece shows it without the marker by default. The marker is kept where it teaches: Translate's
"pieces as the model sees them" switch shows the pieces exactly as the tokenizer gives them, so a piece that
starts a word ("▁Hund") can be told from one that continues it ("e").

Only display: the model, the search and every output keep the tokenizer's pieces. Figures index their axes
by position, so two pieces that become the same text ("▁a" and "a" both shown as "a") keep their own rows.
"""

from __future__ import annotations

from collections.abc import Iterable

from explorer.tokenizer import WORD_START

# A piece that is only the marker (SentencePiece writes one before a piece it cannot join to the word, and a
# barely trained model may emit one) would show as an empty label: it shows as the visible-space sign.
SPACE_SHOWN = "\u2423"  # '␣'


def shown_piece(piece: str, marker: bool = False) -> str:
    """`piece` as a reader sees it: '▁Hund' -> 'Hund', 'e' -> 'e', '<s>' -> '<s>', '▁' -> '␣'.

    marker: keep the piece as the model sees it ('▁Hund'), for the views that teach subword units.
    """
    if marker:
        return piece
    return piece.replace(WORD_START, "") or (SPACE_SHOWN if piece else piece)


def shown_pieces(pieces: Iterable[str], marker: bool = False) -> list[str]:
    """`shown_piece` of each of `pieces`, in order (one label per piece, repeats kept)."""
    return [shown_piece(piece, marker) for piece in pieces]
