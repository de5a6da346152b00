"""The server begins the frame's once-a-process work when it starts (main_script/server.py `warm_up`): the OpenMP
settings first, then torch and the other heavy libraries, while Streamlit starts and the browser loads the page."""

from __future__ import annotations

import subprocess
import sys

from tests.browser.helpers import REPO

PROBE = """
import os, runpy, sys, threading
runpy.run_path("main_script/server.py")
[thread.join() for thread in threading.enumerate() if thread.name == "warm-up"]
from explorer import runtime
from ui import startup
print("torch" in sys.modules, bool(runtime.LAST_LOAD), sorted(startup._done))
"""


def test_starting_the_server_imports_torch_after_the_openmp_settings():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.stdout.split("\n")[-2] == "True True ['leftovers', 'libraries']", out.stdout + out.stderr
