"""The Tour page's sections (pages/tour.py): its state, its stops' views, exercises and links."""
