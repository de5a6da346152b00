"""The guided tour of the paper (issue 17): stops, per-stop numbers and exercises, computed from a model."""
