"""The server `python app.py` starts: the frame (frame.py) as an ASGI application, whose page addresses answer with
an HTML page that tells the browser where the server is.

Why: Streamlit's browser code looks for its server from the page's own address. On /translate it first asks
/translate/_stcore/health and /translate/_stcore/host-config, which are 404 (the server is at /), and only then /,
so every page load left two failed requests in the browser's console and in any proxy's log. Streamlit reads
`window.__streamlit.BACKEND_BASE_URL` (its hook for pages that embed it) before it probes; the pages served here
set it to the folder of the page's address, the server's root, so the first probe is the one that answers.

Only the pages' own addresses are served here, from Streamlit's own index.html; every other request (the assets,
the health check, the websocket) goes to Streamlit unchanged. `streamlit run` finds `app` below and serves it.
"""

from __future__ import annotations

import functools
import sys
import threading
from pathlib import Path

import streamlit
import streamlit as st
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # ui/ sits in the repository root, one folder up
    sys.path.insert(0, str(ROOT))

FRAME = Path(__file__).resolve().with_name("frame.py")
INDEX = Path(streamlit.__file__).resolve().parent / "static" / "index.html"
# The page's folder: "/" for /translate, "/base/" under a server.baseUrlPath of /base.
BASE_URL_HINT = '<script>window.__streamlit = { BACKEND_BASE_URL: new URL(".", window.location.href).href }</script>'


@functools.cache
def page_html() -> str:
    """Streamlit's index.html with the hint first in its head, before Streamlit's own script reads it (unchanged,
    should a later Streamlit's page have no plain <head>: the page then works as before, with the two probes)."""
    html = INDEX.read_text(encoding="utf-8")
    return html.replace("<head>", "<head>\n    " + BASE_URL_HINT, 1)


async def page(request: Request) -> HTMLResponse:
    # As Streamlit serves its HTML: never cached, so a new Streamlit's assets are always the ones asked for.
    return HTMLResponse(page_html(), headers={"Cache-Control": "no-cache"})


def page_routes() -> list[Route]:
    """A route for the address of every page of the frame's list (ui/pages.py), the hidden ones (a phone's /join)
    included, and for the start page's."""
    from ui.pages import HIDDEN_PAGES, PAGES

    paths = ("start", *(spec.url_path for spec in (*PAGES, *HIDDEN_PAGES)))
    return [Route(f"/{path}", page, methods=["GET", "HEAD"]) for path in paths]


def warm_up() -> None:
    """The frame's once-a-process work (the OpenMP settings, then the heavy imports: torch, plotly, pandas), begun
    when the server starts instead of in the first page run: it overlaps Streamlit's own start and the browser
    loading the page, a few seconds on a 2-core machine. The first page run's `start_up()` waits for it under
    ui/startup.py's lock, so no script ever sees a half-imported module."""
    from ui.startup import start_up

    start_up()


app = st.App(FRAME, routes=page_routes())  # Streamlit's public ASGI app, with our routes first
threading.Thread(target=warm_up, name="warm-up", daemon=True).start()
