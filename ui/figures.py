"""Show a figure the same way on every page: the plotly chart plus offline PNG and SVG downloads.

The modebar's camera saves what is on screen (PNG, in the browser). The two buttons under the chart give
a file for slides: a white-background PNG at twice the size and an SVG, both rendered by kaleido with a
local Chromium. Starting Chromium takes about two seconds, so the files are made only when a button is
clicked (Streamlit's deferred `download_button` data, run on its own thread), never on a rerun.

On the page every text colour is the body text of the theme the browser shows (`for_page_theme`): Streamlit's
own plotly theme draws axis text in a grey under 4.5:1 on white. The files keep the light look on white.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, cast

import plotly.graph_objects as go
import streamlit as st

from explorer.figures.export import download_config, figure_to_png, figure_to_svg, find_browser
from explorer.figures.plotly_threads import copy_figure
from explorer.figures.theme import for_page_theme, scale_text
from ui.i18n import t
from ui.presenter import font_scale


def file_stem(name: str) -> str:
    """'Encoder self-attention, layer 2' -> 'encoder-self-attention-layer-2'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name.strip()).strip("-.").lower() or "figure"


@functools.lru_cache(maxsize=16)
def _export(spec_json: str, fmt: str) -> bytes:
    """The exported file for one figure spec; repeated clicks on the same view cost nothing."""
    fig = go.Figure(json.loads(spec_json))
    return figure_to_svg(fig) if fmt == "svg" else figure_to_png(fig)


def _deferred(fig: go.Figure, fmt: str) -> Callable[[], bytes]:
    """A no-argument callable for `download_button(data=...)` that renders `fig` when the user clicks."""
    return lambda: _export(fig.to_json(), fmt)


_THEMED: OrderedDict[tuple[bytes, str, float], go.Figure] = OrderedDict()
_THEMED_LOCK = threading.Lock()  # the app's sessions run their scripts in threads of one process


def _themed(fig: go.Figure, mode: str, scale: float) -> go.Figure:
    """`fig` in the page's text colours and presenter scale, themed once per distinct figure (its JSON is the key):
    a rerun redraws mostly unchanged figures, and theming one through plotly's validated setters costs about ten
    times the JSON. The last 64 are kept; the figure handed out is shared, and `st.plotly_chart` only reads it."""
    key = (hashlib.blake2b(fig.to_json().encode(), digest_size=16).digest(), mode, scale)
    with _THEMED_LOCK:
        hit = _THEMED.get(key)
        if hit is not None:
            _THEMED.move_to_end(key)
            return hit
    themed = scale_text(for_page_theme(copy_figure(fig), mode), scale)  # `fig` may be shared: only read
    with _THEMED_LOCK:
        _THEMED[key] = themed
        while len(_THEMED) > 64:
            _THEMED.popitem(last=False)
    return themed


def page_theme() -> str:
    """ "light" or "dark", as the browser reports the page's background (light until it has said)."""
    mode = st.context.theme.type or "light"
    return mode if mode in ("light", "dark") else "light"


def show_figure(
    fig: go.Figure,
    name: str,
    key: str,
    *,
    downloads: bool = True,
    on_select: str | Callable[[], None] = "ignore",
    selection_mode: str | tuple[str, ...] = "points",
) -> Any:
    """Render `fig` full width with the lecture download config, and PNG/SVG download buttons under it.

    `name` is the human title of the view (it names the files); `key` must be unique on the page.
    `on_select` / `selection_mode` go to `st.plotly_chart` (clicking points of the chart); the chart's
    event state is returned (None unless on_select is set).
    """
    # A themed copy (presenter mode: larger text): the caller's figure is not changed, the exports keep the light
    # colours.
    shown = _themed(fig, page_theme(), font_scale())
    event = st.plotly_chart(
        shown,
        width="stretch",
        theme="streamlit",
        config=download_config(name),
        key=key,
        # Any: plotly_chart's overloads split on a literal "ignore" against a callback, and this passes either.
        on_select=cast(Any, on_select),
        selection_mode=cast(Any, selection_mode),
    )
    result = event if on_select != "ignore" else None
    if not downloads:
        return result
    stem = file_stem(name)
    if find_browser() is None:
        st.caption(t("PNG: camera icon on the chart. SVG export needs a local Chromium, which was not found."))
        return result
    # A horizontal row sized to its buttons: fixed columns squeeze the labels to "P…" in half-width layouts.
    row = st.container(horizontal=True, gap="small")
    for label, mime, icon, help_text in (
        (
            "PNG",
            "image/png",
            ":material/image:",
            t("A white-background PNG at twice the size, for slides (takes a moment)."),
        ),
        ("SVG", "image/svg+xml", ":material/polyline:", t("A vector SVG of this figure (takes a moment).")),
    ):
        kind = label.lower()
        row.download_button(
            label,
            data=_deferred(fig, kind),
            file_name=f"{stem}.{kind}",
            mime=mime,
            key=f"{key}__{kind}",
            on_click="ignore",
            icon=icon,
            width="content",
            help=help_text,
        )
    return result
