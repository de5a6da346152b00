"""Shared look of every figure: large type for a projector, transparent backgrounds, fixed colour scales.

Light and dark themes: the figures set font *sizes* but never a text colour. In the app,
``st.plotly_chart(fig, theme="streamlit")`` (Streamlit's default) fills the template's text, grid and
hover colours from the active light or dark theme, and the transparent paper shows the page behind it.
Trace colours are chosen to read on both white and near-black: a perceptual sequential scale (Viridis)
for attention weights, a diverging scale for signed values, and mid-luminance hues for lines.

Static export (`figure_to_svg`, `figure_to_png`) uses kaleido >= 1, which drives a local Chromium over
the DevTools protocol. It works offline: the page it renders loads the plotly.js that ships inside the
plotly package from disk, and MathJax (which kaleido would otherwise fetch from a CDN) is switched off.
The browser is ``$BROWSER_PATH`` if set, else the first of ``chromium``, ``google-chrome``... on PATH.
"""

from __future__ import annotations

import html
import os
import re
import shutil
from collections.abc import Sequence

import plotly.graph_objects as go

# Type sizes in CSS pixels. The base size is what axis titles and legends use; ticks are one step down
# but never under 16 px, so a token label is readable from the back of a lecture hall.
FONT_SIZE = 18
TITLE_SIZE = 24
TICK_SIZE = 16
HOVER_SIZE = 16

# Attention weights: perceptual, colour-blind safe, and its dark end is still distinct from a dark page.
WEIGHT_COLORSCALE = "Viridis"
# Signed values (positional encodings, cosine similarity): blue for negative, red for positive.
DIVERGING_COLORSCALE = "RdBu_r"
# Mid-luminance hues (Tableau-like) that keep enough contrast against both white and near-black.
PALETTE: tuple[str, ...] = (
    "#4E79A7",
    "#F28E2B",
    "#E15759",
    "#59A14F",
    "#B07AA1",
    "#76B7B2",
    "#D4A017",
    "#E377C2",
    "#9C755F",
    "#17BECF",
)
# Gridlines that are visible but quiet on either background.
GRID_COLOR = "rgba(128, 128, 128, 0.25)"
TRANSPARENT = "rgba(0, 0, 0, 0)"

# The template is pinned so a figure looks the same whether or not streamlit was imported first
# (importing streamlit makes its placeholder-colour template the process default).
TEMPLATE = "plotly_white"

DEFAULT_EXPORT_WIDTH = 1200
DEFAULT_EXPORT_HEIGHT = 700

_BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def color(i: int) -> str:
    """The i-th palette colour, cycling."""
    return PALETTE[i % len(PALETTE)]


def rgba(hex_color: str, alpha: float) -> str:
    """'#RRGGBB' with an opacity, as a plotly 'rgba(r, g, b, a)' string."""
    h = hex_color.lstrip("#")
    assert len(h) == 6, f"expected a '#RRGGBB' colour, got {hex_color!r}"
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha:.3f})"


def colorbar(title: str, **kwargs) -> dict:
    """A colour bar with its title running alongside, so it never collides with the top tick label."""
    return dict(title=dict(text=title, side="right"), thickness=20, **kwargs)


def escape_labels(labels: Sequence[str]) -> list[str]:
    """Token labels made safe for plotly's pseudo-HTML text: '<s>' would otherwise vanish as a tag."""
    return [html.escape(str(label), quote=False) for label in labels]


def apply_theme(fig: go.Figure, *, title: str | None = None, height: int | None = None) -> go.Figure:
    """Apply the lecture look to `fig` in place and return it.

    Call it after all subplots exist: axis styling is applied to every axis present at call time.
    """
    fig.update_layout(
        template=TEMPLATE,
        font=dict(size=FONT_SIZE),
        title=dict(font=dict(size=TITLE_SIZE), **({"text": title} if title else {})),
        paper_bgcolor=TRANSPARENT,
        plot_bgcolor=TRANSPARENT,
        margin=dict(l=80, r=40, t=80 if (title or fig.layout.title.text) else 40, b=70),
        hoverlabel=dict(font=dict(size=HOVER_SIZE)),
        legend=dict(font=dict(size=FONT_SIZE)),
    )
    if height is not None:
        fig.update_layout(height=int(height))
    axis_style = dict(
        tickfont=dict(size=TICK_SIZE),
        title_font=dict(size=FONT_SIZE),
        gridcolor=GRID_COLOR,
        zerolinecolor=GRID_COLOR,
        automargin=True,
    )
    fig.update_xaxes(**axis_style)
    fig.update_yaxes(**axis_style)
    # Subplot titles ("Head 1", "Layer 2") are annotations; give them the base size too.
    fig.update_annotations(font_size=FONT_SIZE)
    return fig


def _slug(name: str) -> str:
    stem = re.sub(r"\.png$", "", name.strip(), flags=re.IGNORECASE)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.").lower()
    return slug or "figure"


def download_config(filename: str) -> dict:
    """The plotly `config` for ``st.plotly_chart(fig, config=...)``.

    The modebar's camera button then saves a PNG at twice the on-screen resolution, named after the
    view (``"Encoder self-attention"`` -> ``encoder-self-attention.png``). The export runs in the
    browser with the plotly.js bundled inside Streamlit, so it needs no network.
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


def _export(fig: go.Figure, fmt: str, scale: float, width: int | None, height: int | None,
            background: str | None) -> bytes:
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

    spec = go.Figure(fig).to_dict()  # a copy: the caller's figure is not touched
    layout = spec.setdefault("layout", {})
    if background is not None:
        # A file on a slide has no page behind it: give it its own background so the template's dark
        # text stays readable whatever the slide colour.
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


def figure_to_svg(fig: go.Figure, *, width: int | None = None, height: int | None = None,
                  background: str | None = "white") -> bytes:
    """The figure as SVG bytes (offline, via kaleido and a local Chromium).

    `background=None` keeps the transparent background. Raises `ExportUnavailableError` without a browser.
    """
    return _export(fig, "svg", 1, width, height, background)


def figure_to_png(fig: go.Figure, scale: float = 2, *, width: int | None = None,
                  height: int | None = None, background: str | None = "white") -> bytes:
    """The figure as PNG bytes at `scale` times its layout size (offline, via kaleido and Chromium)."""
    return _export(fig, "png", scale, width, height, background)
