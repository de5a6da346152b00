"""Outside presenter mode the tour and Translate import nothing of the classroom rooms: their database layer
(SQLAlchemy) and QR codes were ~0.35 s of every fresh server's first tour visit. In presenter mode the tour's
room panel is there. Each page runs in a fresh interpreter, as on a fresh server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.browser.helpers import REPO

SCRIPT = """
import json, sys
from tests.apptest_helpers import open_page
page, presenter = sys.argv[1], sys.argv[2] == "1"
at = open_page(page, model="words-fixture", **({"presenter": "1"} if presenter else {}))
print(json.dumps({
    "modules": [m for m in ("sqlalchemy", "explorer.rooms.store", "segno") if m in sys.modules],
    "panel": bool([e for e in at.get("button") if e.key == "room_open"]),
}))
"""


@pytest.mark.parametrize(
    "page, presenter",
    [("pages/tour.py", False), ("pages/translate.py", False), ("pages/tour.py", True)],
)
def test_rooms_are_imported_only_in_presenter_mode(checkpoint_root, page, presenter):
    env = {**os.environ, "EXPLORER_CHECKPOINTS": str(checkpoint_root)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, page, "1" if presenter else "0"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    if presenter:
        assert found["panel"] and "explorer.rooms.store" in found["modules"], found
    else:
        assert found == {"modules": [], "panel": False}, found
