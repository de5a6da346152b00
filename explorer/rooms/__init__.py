"""Classroom rooms: the tour's exercises answered by a whole class from their phones (explorer/rooms/store.py),
stored through SQLAlchemy in SQLite or a shared PostgreSQL (explorer/rooms/schema.py). Never imports streamlit."""
