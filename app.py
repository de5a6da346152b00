"""Attention Explorer. Start it with `python app.py` (options of `streamlit run` may follow, e.g.
`python app.py --server.port 8502`).

For a lecture, `python app.py --class-port 8502` starts a second server on port 8502 for the students (in
shared mode, on the same rooms database): the room's join link and QR code point at it, so forty phones rerunning
their pages never queue in front of the projector's clicks. Streamlit runs every session's script in threads of
one interpreter; two processes give the lecturer an interpreter of its own.

This file hands over to the app's main script, main_script/frame.py (the frame: page list, sidebar, shared
model loading), by running `streamlit run main_script/server.py` in its place (the frame as an ASGI app whose
pages tell the browser where the server is, so it does not probe two wrong addresses first: see that file).
The main script lives in a folder of its own because Streamlit treats a `pages/` folder beside its main script
as its old multipage layout: on a fresh server, the first request for a deep link (/beam?beam_k=3, a lecture
slide's link) would run pages/beam.py alone, without the frame. Beside this file is `pages/`, so this file must
not be the main script.

`streamlit run app.py` works too for the start page (Streamlit then runs this file, which runs the frame), but
there a fresh server's first deep link opens its page without the frame: use `python app.py`.
"""

import os
import runpy
import sys
from pathlib import Path

MAIN_SCRIPT = Path(__file__).resolve().parent / "main_script" / "frame.py"
SERVER = MAIN_SCRIPT.with_name("server.py")

if __name__ == "__main__":
    import streamlit as st

    if st.runtime.exists():  # started by `streamlit run app.py`: this run is a page request
        runpy.run_path(str(MAIN_SCRIPT), run_name="__main__")
    else:  # `python app.py`: become `streamlit run main_script/server.py` (same process, so signals reach it)
        from main_script.class_server import start_class_server, without_class_port

        class_port, options = without_class_port(sys.argv[1:])
        if class_port is not None:
            start_class_server(SERVER, class_port, options)
        os.execv(sys.executable, [sys.executable, "-m", "streamlit", "run", str(SERVER), *options])
