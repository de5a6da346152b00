"""Synchronized heads: attention heads as one Vega-Lite (Altair) chart in which hovering a query
token's row in any head highlights the same query row in every head shown, and dims the rest.

Why Vega-Lite and not plotly: Streamlit does not send plotly hover events back to Python (only clicks and
box/lasso selections), and a round trip through the script per mouse move would be far too slow anyway.
A Vega-Lite selection parameter lives in the browser: every head's view declares the same point selection
on the `query` field, so the highlight follows the pointer without a rerun and needs no network (Streamlit
bundles Vega).

Two builders, pure (arrays and labels in, an Altair chart out):

- `linked_heads(panels, look)`: two to four heads side by side (the Compare page), each with its own tokens,
  one row for up to three, 2 x 2 for four.
- `linked_grid(weights, ..., look)`: every head of every layer (layers, heads, q, k) as a facet grid, Layer 1 the
  top row and Head 1 the left column.

Both use one colour scale for every head: by default the fixed domain [0, 1], the whole range a softmax
weight can take, so a colour means the same weight in every head, on every sentence and in every layer
(`LinkedLook(zmax=None)` uses the largest weight shown instead, which brings out heads that spread their attention).
Heads are linked by query position: on one sentence that is the same token in every head; when Compare
puts two sentences (or two tokenizers) side by side, it is the same position. Rows are queries from the top,
columns are keys, both by position; the token text is the axis label where it fits at a readable size
(14 px or more), otherwise it is on hover only.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the lint tools

from explorer.figures.attention import _check
from explorer.figures.compare import Panel, panel_grid
from explorer.figures.theme import (
    FONT_FAMILY,
    FONT_SIZE,
    MIN_TEXT_SIZE,
    PAGE_COLORS,
    TICK_SIZE,
    TITLE_SIZE,
    text_width_px,
)
from explorer.i18n import translate

SELECTION = "query_hover"  # the shared point selection: which query position the pointer is on
DIMMED_OPACITY = 0.25  # the other rows while a query is hovered: still there, clearly behind
# Room the layout needs besides the heatmaps, in px at text scale 1: the colour legend with its title and
# numbers, one axis title, the gap between views. Sized generously: Vega-Lite cannot shrink a compound chart
# to its container, so an estimate that is too small would push the chart past the column.
_LEGEND_PX = 95
_AXIS_TITLE_PX = 28
_GAP_PX = 12
_HEADER_PX = 30  # a panel title or a facet header line


@dataclass(frozen=True)
class _Axis:
    """How one axis of a panel is drawn: band step in px, label size (None: labels on hover only), angle."""

    step: float
    size: float | None
    angle: int = 0


def _label_size(step: float, scale: float) -> float | None:
    """The largest readable label size (16 px, else 14 px; 16 px times `scale` when enlarged) whose line fits
    a band of `step` px; None when none fits (the labels are then left out and shown on hover)."""
    # Presenter mode (scale > 1) promises its larger text for every label: no smaller fallback there.
    for size in (TICK_SIZE * scale,) if scale > 1 else (TICK_SIZE, MIN_TEXT_SIZE):
        if step >= 1.15 * size:
            return size
    return None


def _widest(labels: Sequence[str], size: float) -> float:
    return max((text_width_px(str(label), size) for label in labels), default=0.0)


def _key_axis(labels: Sequence[str], step: float, scale: float) -> _Axis:
    """Key labels run across when the widest fits its column, else upright (-90 degrees), else on hover."""
    size = _label_size(step, scale)
    if size is None:
        return _Axis(step, None)
    return _Axis(step, size, 0 if _widest(labels, size) + 6 <= step else -90)


def title_lines(title: str, width: float, size: float) -> list[str]:
    """A title broken after " · ", ": ", " — " or ", " into lines no wider than `width` px where it can be:
    Vega-Lite sizes a view's column to its title (a wide title pushes the next head to the right), and
    Streamlit cuts a chart title wider than its column with an ellipsis."""
    pieces = [p for p in re.split(r"(?<= \u00b7 )|(?<=: )|(?<= \u2014 )|(?<=, )", title) if p]
    lines: list[str] = []
    for piece in pieces:
        if lines and text_width_px((lines[-1] + piece).rstrip(), size) <= width:
            lines[-1] += piece
        else:
            lines.append(piece)
    return [line.rstrip(" \u00b7").rstrip() for line in lines]


def _key_band(labels: Sequence[str], axis: _Axis) -> float:
    """Height in px the key labels take under the heatmap: none, one line, or the widest token upright."""
    if axis.size is None:
        return 0.0
    return (1.3 * axis.size if axis.angle == 0 else _widest(labels, axis.size)) + 8


def _label_expr(labels: Sequence[str]) -> str:
    """A Vega expression that turns a position into its token: ["a", "b"][datum.value]."""
    return f"{json.dumps([str(label) for label in labels], ensure_ascii=False)}[datum.value]"


def _axis(labels: Sequence[str], title: str | None, axis: _Axis, scale: float) -> alt.Axis:
    shown = axis.size is not None
    return alt.Axis(
        title=title,
        labels=shown,
        labelExpr=_label_expr(labels) if shown else alt.Undefined,
        labelFontSize=alt.Undefined if axis.size is None else axis.size,
        labelAngle=axis.angle,
        labelLimit=0,  # never cut a token to "…": the layout made room for the widest
        labelOverlap=False,
        ticks=shown,
        domain=False,
        titleFontSize=FONT_SIZE * scale,
    )


def _long(weights: np.ndarray, query_labels: Sequence[str], key_labels: Sequence[str]) -> pd.DataFrame:
    """(q, k) weights as one row per cell: query and key positions, their tokens, the weight."""
    q, k = weights.shape
    rows, cols = np.meshgrid(np.arange(q), np.arange(k), indexing="ij")
    return pd.DataFrame(
        {
            "query": rows.ravel(),
            "key": cols.ravel(),
            "query_token": np.asarray([str(s) for s in query_labels], dtype=object)[rows.ravel()],
            "key_token": np.asarray([str(s) for s in key_labels], dtype=object)[cols.ravel()],
            "weight": weights.astype(float).ravel(),
        }
    )


def query_selection() -> Any:
    """The point selection every head shares: the `query` field under the pointer, cleared when it leaves.

    One selection (one name) declared in every view, resolved globally: hovering a cell in any head sets it,
    and every head tests its own cells against the same query position.
    """
    return alt.selection_point(name=SELECTION, on="pointerover", clear="pointerout", fields=["query"])


def _heat(
    data: pd.DataFrame,
    *,
    top: float,
    lang: str,
    x_axis: alt.Axis,
    y_axis: alt.Axis,
    text: str,
    scale: float,
    hover: Any,
    extra_tooltip: Sequence[alt.Tooltip] = (),
) -> alt.Chart:
    """One head's heatmap with the shared selection: the hovered query row full strength and outlined,
    the other rows dimmed; nothing hovered, everything full strength."""
    return (
        alt.Chart(data)
        .mark_rect(strokeWidth=2 * scale)
        .encode(
            x=alt.X("key:O", axis=x_axis, sort="ascending"),
            y=alt.Y("query:O", axis=y_axis, sort="ascending"),
            color=alt.Color(
                "weight:Q",
                scale=alt.Scale(scheme="viridis", domain=[0.0, top], clamp=True),
                legend=alt.Legend(
                    title=translate("weight", lang),
                    orient="right",
                    gradientLength=160 * scale,
                    labelFontSize=TICK_SIZE * scale,
                    titleFontSize=FONT_SIZE * scale,
                ),
            ),
            opacity=alt.when(hover).then(alt.value(1.0)).otherwise(alt.value(DIMMED_OPACITY)),
            stroke=alt.when(hover, empty=False).then(alt.value(text)).otherwise(alt.value(None)),
            tooltip=[
                *extra_tooltip,
                alt.Tooltip("query_token:N", title=translate("query", lang)),
                alt.Tooltip("key_token:N", title=translate("key", lang)),
                alt.Tooltip("weight:Q", title=translate("weight", lang), format=".4f"),
            ],
        )
        .add_params(hover)
    )


def _config(chart: Any, theme: str, scale: float, title: str | None, width: float, subtitle: str | None = None) -> Any:
    """The lecture look (explorer/figures/theme.py) in Vega-Lite: sizes, font, the page theme's text colour
    on a transparent background, SVG rendering (crisp on a projector; one element per cell)."""
    assert theme in PAGE_COLORS, f"expected a theme in {tuple(PAGE_COLORS)}, got {theme!r}"
    text = PAGE_COLORS[theme]["text"]
    if title or subtitle:
        chart = chart.properties(
            title=alt.Title(
                title_lines(title, width, TITLE_SIZE * scale) if title else subtitle or "",
                subtitle=subtitle if title and subtitle else alt.Undefined,
                fontSize=(TITLE_SIZE if title else FONT_SIZE) * scale,
                fontWeight="bold" if title else "normal",
                subtitleFontSize=FONT_SIZE * scale,
                subtitleColor=text,
                anchor="start",
            )
        )
    # SVG: crisp on a projector, and every cell an element (with its aria-label) that a test can find. The
    # padding keeps the legend's title clear of the right edge when the page font measures wider than Vega's.
    chart = chart.properties(
        usermeta={"embedOptions": {"renderer": "svg", "actions": False}},
        padding={"left": 4, "top": 4, "right": 16, "bottom": 4},
    )
    return (
        chart.configure(background="transparent", font=FONT_FAMILY)
        .configure_view(stroke=None)
        .configure_axis(labelColor=text, titleColor=text, labelFontSize=TICK_SIZE * scale, labelPadding=4)
        .configure_header(
            labelColor=text, titleColor=text, labelFontSize=FONT_SIZE * scale, titleFontSize=FONT_SIZE * scale
        )
        .configure_legend(labelColor=text, titleColor=text)
        .configure_title(color=text, fontSize=TITLE_SIZE * scale)
    )


@dataclass(frozen=True)
class LinkedLook:
    """How a linked chart is drawn: the top of its colour scale (`zmax`, None: the largest weight shown), its
    title, the language and page theme of its text, its size in px and its text scale (presenter mode)."""

    zmax: float | None = 1.0
    title: str | None = None
    lang: str = "en"
    theme: str = "light"
    width: int = 640
    height: int = 440
    text_scale: float = 1.0

    @property
    def text_color(self) -> str:
        return PAGE_COLORS[self.theme]["text"] if self.theme in PAGE_COLORS else PAGE_COLORS["light"]["text"]

    @property
    def title_px(self) -> float:
        """The height the title's lines take at the chart's width (0 without a title)."""
        if not self.title:
            return 0.0
        scale = self.text_scale
        return 1.5 * TITLE_SIZE * scale * len(title_lines(self.title, self.width, TITLE_SIZE * scale))


def shared_top(weights: Sequence[np.ndarray], zmax: float | None) -> float:
    """The top of the one colour scale: `zmax`, or the largest weight over every head shown when None."""
    if zmax is not None:
        return float(zmax)
    return float(max(float(np.max(w)) for w in weights)) or 1.0


def linked_heads(
    panels: Sequence[Panel],
    look: LinkedLook = LinkedLook(),
) -> alt.ConcatChart:
    """Two to four heads, each `Panel` weights (q, k) with its own tokens, linked by the hovered query.

    Laid out like `explorer.figures.compare.compare_heads` (one row up to three, 2 x 2 for four), in about
    `width` x `height` px. A panel whose query tokens are those of the panel to its left leaves out its row
    labels (the rows line up). One `concat` with `columns`, the views in panel order.
    """
    assert 1 <= len(panels) <= 4, f"expected 1 to 4 panels, got {len(panels)}"
    weights = [_check(p.weights, 2, p.query_labels, p.key_labels, "(q, k)") for p in panels]
    rows, cols = panel_grid(len(panels))
    title, lang, theme, width, height, s = look.title, look.lang, look.theme, look.width, look.height, look.text_scale
    top = shared_top(weights, look.zmax)
    text = look.text_color
    repeats = [
        i % cols > 0
        and list(panels[i - 1].query_labels) == list(p.query_labels)
        and panels[i - 1].query_title == p.query_title
        for i, p in enumerate(panels)
    ]
    # Which labels fit depends on the cell size, and the room left for cells on which labels are drawn:
    # settle it in a few passes, starting from the most room the labels could take.
    title_px = look.title_px
    header_lines, keys_px = 1, max(_widest(p.key_labels, TICK_SIZE * s) for p in panels) + 8
    for _ in range(3):
        below = _HEADER_PX * s * header_lines + keys_px + _AXIS_TITLE_PX * s
        plot_h = max(
            40.0,
            (height - title_px - below * rows - _GAP_PX * (rows - 1)) / rows,
        )
        ys = [_Axis(plot_h / len(p.query_labels), _label_size(plot_h / len(p.query_labels), s)) for p in panels]
        ys = [_Axis(y.step, None) if repeats[i] else y for i, y in enumerate(ys)]
        side_px = [
            (0.0 if y.size is None else _widest(p.query_labels, y.size) + 12)
            + (0.0 if repeats[i] else _AXIS_TITLE_PX * s)
            for i, (p, y) in enumerate(zip(panels, ys, strict=True))
        ]
        side = max(sum(side_px[r * cols : (r + 1) * cols]) for r in range(rows))
        plot_w = max(40.0, (width - side - _LEGEND_PX * s - _GAP_PX * (cols - 1)) / cols)
        xs = [_key_axis(p.key_labels, plot_w / len(p.key_labels), s) for p in panels]
        titles = [title_lines(p.title, plot_w, FONT_SIZE * s) for p in panels]
        header_lines = max(len(lines) for lines in titles)
        keys_px = max(_key_band(p.key_labels, x) for p, x in zip(panels, xs, strict=True))

    hover = query_selection()  # one object for every view: Altair lifts it to the top with the views' names
    views = []
    for i, (panel, w, x, y) in enumerate(zip(panels, weights, xs, ys, strict=True)):
        data = _long(w, panel.query_labels, panel.key_labels)
        data["panel"] = panel.title
        views.append(
            _heat(
                data,
                top=top,
                lang=lang,
                x_axis=_axis(panel.key_labels, translate(panel.key_title, lang), x, s),
                y_axis=_axis(panel.query_labels, None if repeats[i] else translate(panel.query_title, lang), y, s),
                text=text,
                scale=s,
                hover=hover,
                extra_tooltip=[alt.Tooltip("panel:N", title=translate("head", lang))],
            ).properties(width=round(plot_w), height=round(plot_h), title=alt.Title(titles[i], fontSize=FONT_SIZE * s))
        )
    with warnings.catch_warnings():
        # Altair 6 warns whenever one selection appears in several views ("deduplicated"): here sharing it is
        # the point, and the spec has the one parameter with every view's name, as intended.
        warnings.filterwarnings("ignore", "Automatically deduplicated selection parameter", UserWarning)
        grid = alt.concat(*views, columns=cols, spacing=_GAP_PX).resolve_scale(color="shared")
    return _config(grid, theme, s, title, width)


def linked_grid(
    weights: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    look: LinkedLook = LinkedLook(),
) -> alt.FacetChart:
    """Every head of every layer, weights (L, H, q, k), as an L x H facet grid linked by the hovered query.

    Layer 1 is the top row, Head 1 the left column (Section 3.2.2: h heads run in parallel in each of the
    N layers); the headers say "Layer 1" and "Head 1", counted from 1 as everywhere in the app. The tokens
    label the left column's rows and the bottom row's columns where they fit, and every cell's hover names
    "Layer l · Head h", the query, the key and the weight.
    """
    w = _check(weights, 4, query_labels, key_labels, "(layers, heads, q, k)")
    n_layers, n_heads, q, k = w.shape
    title, lang, theme, width, height, s = look.title, look.lang, look.theme, look.width, look.height, look.text_scale
    top = shared_top([w], look.zmax)
    text = look.text_color
    layer_names = [translate("Layer {n}", lang, n=layer + 1) for layer in range(n_layers)]
    head_names = [translate("Head {n}", lang, n=head + 1) for head in range(n_heads)]
    # Axis titles would repeat in every row and column of thumbnails: one line under the title says it instead.
    subtitle = translate("Rows: queries · columns: keys", lang)

    # Settle which labels fit in a few passes (see linked_heads). Columns too narrow for "Head 8" are headed
    # "1".."8" under one "Head" title.
    row_header_px = _widest(layer_names, FONT_SIZE * s) + 16
    title_px = look.title_px
    above = title_px + _HEADER_PX * s  # the title's lines, then the subtitle
    keys_px, narrow = _widest(key_labels, TICK_SIZE * s) + 8, False
    for _ in range(3):
        plot_h = max(16.0, (height - above - _HEADER_PX * s * (2 if narrow else 1) - keys_px - 4 * (n_layers - 1)))
        plot_h /= n_layers
        y = _Axis(plot_h / q, _label_size(plot_h / q, s))
        left = row_header_px + (0.0 if y.size is None else _widest(query_labels, y.size) + 12)
        plot_w = max(16.0, (width - left - _LEGEND_PX * s - 4 * (n_heads - 1)) / n_heads)
        x = _key_axis(key_labels, plot_w / k, s)
        keys_px = _key_band(key_labels, x)
        narrow = _widest(head_names, FONT_SIZE * s) + 8 > plot_w
    columns = [str(head + 1) for head in range(n_heads)] if narrow else head_names

    cell = _long(w[0, 0], query_labels, key_labels)
    frames = []
    for layer in range(n_layers):
        for head in range(n_heads):
            frame = cell.copy()
            frame["weight"] = w[layer, head].astype(float).ravel()
            frame["layer"] = layer_names[layer]
            frame["head"] = columns[head]
            frame["name"] = translate("Layer {layer} · Head {head}", lang, layer=layer + 1, head=head + 1)
            frames.append(frame)
    data = pd.concat(frames, ignore_index=True)

    heat = _heat(
        data,
        top=top,
        lang=lang,
        x_axis=_axis(key_labels, None, x, s),
        y_axis=_axis(query_labels, None, y, s),
        text=text,
        scale=s,
        hover=query_selection(),
        extra_tooltip=[alt.Tooltip("name:N", title=translate("head", lang))],
    ).properties(width=round(plot_w), height=round(plot_h))
    grid = heat.facet(
        row=alt.Row("layer:N", sort=layer_names, header=alt.Header(title=None, labelAngle=0, labelAlign="left")),
        column=alt.Column(
            "head:N",
            sort=columns,
            header=alt.Header(title=translate("Head", lang) if narrow else None, titleFontWeight="normal"),
        ),
        spacing=4,
    )
    return _config(grid, theme, s, title, width, subtitle)
