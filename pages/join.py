"""Join a classroom room from a phone: /join?room=CODE, or a box for the code (ui/room/join.py)."""

from __future__ import annotations

from ui.room.join import join_page

join_page()
