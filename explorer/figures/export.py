"""Static export of a figure to PNG or SVG bytes, offline, for slides and handouts.

The export uses kaleido >= 1, which drives a local Chromium over the DevTools protocol. It works offline:
the page it renders loads the plotly.js that ships inside the plotly package from disk, and MathJax
(which kaleido would otherwise fetch from a CDN) is switched off. The browser is ``$BROWSER_PATH`` if set,
else the first of ``chromium``, ``google-chrome``... on PATH.

Hangul and other CJK text is drawn with the system's fonts: the figure's font family lists Noto Sans CJK
(Debian's `fonts-noto-cjk`) before the generic `sans-serif`, and Chromium falls back per glyph through
fontconfig, so no font is fetched from the network. Without a CJK font installed Korean comes out as tofu;
`hangul_font_available()` tells whether one is there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

import plotly.graph_objects as go

from explorer.figures.plotly_threads import copy_figure
from explorer.figures.theme import FONT_FAMILY, for_page_theme

DEFAULT_EXPORT_WIDTH = 1200
DEFAULT_EXPORT_HEIGHT = 700

_BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _slug(name: str) -> str:
    stem = re.sub(r"\.png$", "", name.strip(), flags=re.IGNORECASE)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.").lower()
    return slug or "figure"


def download_config(filename: str) -> dict[str, Any]:
    """The plotly `config` for ``st.plotly_chart(fig, config=...)``.

    The modebar's camera button then saves a PNG at twice the on-screen resolution, named after the
    view (``"Encoder self-attention"`` -> ``encoder-self-attention.png``). The export runs in the
    browser with the plotly.js bundled inside Streamlit, so it needs no network. Nothing in it asks for a
    remote resource (no MathJax, no topojson, no web font).
    """
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": _slug(filename), "scale": 2},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


class ExportUnavailableError(RuntimeError):
    """Static export needs kaleido and a local Chrome/Chromium; one of them is missing."""


def find_browser() -> str | None:
    """Path of the Chrome/Chromium kaleido will drive: ``$BROWSER_PATH``, else the first on PATH."""
    env = os.environ.get("BROWSER_PATH")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in _BROWSER_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def hangul_font_available() -> bool:
    """Whether fontconfig knows a font with Hangul syllables (exports of Korean figures need one)."""
    if shutil.which("fc-list") is None:
        return False
    found = subprocess.run(["fc-list", ":lang=ko", "family"], capture_output=True, text=True, check=False)
    return bool(found.stdout.strip())


def _export(
    fig: go.Figure, fmt: str, scale: float, width: int | None, height: int | None, background: str | None
) -> bytes:
    browser = find_browser()
    if browser is None:
        raise ExportUnavailableError(
            "static export needs a local Chrome or Chromium (e.g. `apt-get install chromium`), "
            "or BROWSER_PATH pointing at one"
        )
    try:
        import kaleido
    except ImportError as err:  # pragma: no cover - kaleido is a declared dependency
        raise ExportUnavailableError("static export needs the kaleido package") from err

    copy = copy_figure(fig)  # the caller's figure, maybe shared with other sessions, is not touched
    if background is not None:
        # A file on a slide has no page behind it: it gets its own light background and the light theme's
        # dark text, whatever theme the page showed.
        for_page_theme(copy, "light")
    spec = copy.to_dict()
    layout = spec.setdefault("layout", {})
    # A figure built elsewhere may name no family; the export browser then needs the CJK list to draw Hangul.
    layout.setdefault("font", {}).setdefault("family", FONT_FAMILY)
    if background is not None:
        layout["paper_bgcolor"] = background
        layout["plot_bgcolor"] = background
    opts = dict(
        format=fmt,
        width=int(width or layout.get("width") or DEFAULT_EXPORT_WIDTH),
        height=int(height or layout.get("height") or DEFAULT_EXPORT_HEIGHT),
        scale=scale,
    )
    # mathjax=False: kaleido's default loads MathJax from a CDN. plotly.js comes from the plotly package.
    kopts = dict(path=browser, mathjax=False, timeout=60)
    return kaleido.calc_fig_sync(spec, opts=opts, kopts=kopts)


def figure_to_svg(
    fig: go.Figure, *, width: int | None = None, height: int | None = None, background: str | None = "white"
) -> bytes:
    """The figure as SVG bytes (offline, via kaleido and a local Chromium).

    `background=None` keeps the transparent background. Raises `ExportUnavailableError` without a browser.
    """
    return _export(fig, "svg", 1, width, height, background)


def figure_to_png(
    fig: go.Figure,
    scale: float = 2,
    *,
    width: int | None = None,
    height: int | None = None,
    background: str | None = "white",
) -> bytes:
    """The figure as PNG bytes at `scale` times its layout size (offline, via kaleido and Chromium)."""
    return _export(fig, "png", scale, width, height, background)
