"""Compatibility entry for tests that still open `app.py`: runs the frame, frame/app.py.

Start the app with `streamlit run frame/app.py`, not this file: beside this file is the `pages/` folder,
which makes Streamlit's first request for a deep link (/beam) run that page without the frame (see
frame/app.py). Delete this file once no test opens it (tests use tests/apptest_helpers.APP_SCRIPT).
"""

import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).resolve().parent / "frame" / "app.py"), run_name="__main__")
