"""The Complexity page's sections (pages/complexity.py): Table 1 by formula and by stopwatch."""
