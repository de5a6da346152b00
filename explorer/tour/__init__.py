"""The guided tour of the paper: stops, per-stop numbers and exercises, computed from a model."""
