"""The Attention step by step page's sections (pages/step_by_step.py)."""
