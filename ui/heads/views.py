"""The Heads page's views, in the order of its picker: the URL's value (?h_view=) and the label (a msgid)."""

from __future__ import annotations

VIEWS = {
    "ablate": "Switch heads off",
    "importance": "Which heads matter",
    "flow": "Information flow",
    "roles": "Head roles",
    "replay": "Training replay",
    "paper": "Paper's Figures 3–5",
}
