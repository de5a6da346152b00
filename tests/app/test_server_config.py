"""The server's settings that the app's speed depends on (main_script/.streamlit/config.toml, read by the server
`python app.py` starts)."""

from __future__ import annotations

import subprocess
import sys

from tests.browser.helpers import REPO

SERVER = REPO / "main_script" / "server.py"


def test_no_full_garbage_collection_after_every_script_run():
    """Streamlit's default `runner.postScriptGC` walks the whole heap (torch, plotly, the model) after every run,
    fragment reruns included: about 50 ms of server CPU per run, which made a room's polling phones (one rerun a
    second each) fill the server and a reveal take 10-30 s to reach twenty phones.

    `python app.py` runs `streamlit run main_script/server.py` from the repository's root, and Streamlit reads the
    settings beside its main script (it notes that path when `streamlit run` starts; the test sets it likewise)."""
    code = (
        "import sys; from streamlit import config; config._main_script_path = sys.argv[1]; "
        "config.get_config_options(force_reparse=True); print(config.get_option('runner.postScriptGC'))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(SERVER)], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "False", out.stderr


def test_no_source_file_watcher():
    """Streamlit's default watches the source of every imported module for each browser session: each session's
    first run resolved ~2,000 module paths on the server's event loop, and every later run checked them again.
    `none` also means no watchdog or polling threads."""
    code = (
        "import sys; from streamlit import config; config._main_script_path = sys.argv[1]; "
        "config.get_config_options(force_reparse=True); print(config.get_option('server.fileWatcherType'))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(SERVER)], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "none", out.stderr
