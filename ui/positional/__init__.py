"""The Positional encoding page's sections (pages/positional.py)."""
