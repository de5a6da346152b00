"""Classroom rooms in the app: the phone page (ui/room/join.py, served at /join) and the presenter's room panel
(ui/room/panel.py, on the tour page in presenter mode). Storage is explorer/rooms/."""
