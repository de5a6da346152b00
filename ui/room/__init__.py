"""Classroom rooms in the app: the phone page (ui/room/join.py, served at /join) and the presenter's room panel
(ui/room/panel.py, on the tour page in presenter mode). Storage is explorer/rooms/.

The two entries the tour and Translate call are here, and import the room's modules only in presenter mode:
they bring the database layer (SQLAlchemy) and the QR codes, ~0.35 s of imports that every fresh server's first
tour or Translate visit paid outside presenter mode too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ui.presenter import presenter_on

if TYPE_CHECKING:
    from explorer.inference import Translation
    from explorer.tour.exercises import Exercise


def room_panel(checkpoint: str, sentence: str, exercises: Sequence[Exercise], lang: str) -> None:
    """In presenter mode, the tour's room panel (ui/room/panel.py); nothing otherwise."""
    if presenter_on():
        from ui.room.panel import room_panel as panel

        panel(checkpoint, sentence, exercises, lang)


def ask_the_class(translation: Translation) -> None:
    """In presenter mode, Translate's "Ask the class" (ui/room/ask.py); nothing otherwise."""
    if presenter_on():
        from ui.room.ask import ask_the_class as ask

        ask(translation)
