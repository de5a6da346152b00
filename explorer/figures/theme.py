"""Shared look of every figure, readable on a projector: type sizes, fonts, colour scales, text colours.

Sizes: every text in a figure is at least `MIN_TEXT_SIZE` (14 px) at 1280x720; titles, axis titles and
legends are larger. Plotly sizes are CSS pixels and do not shrink with the window.

Light and dark: Streamlit's plotly theme draws axis text in a mid grey on the light page (#808495 on white,
3.8:1, under WCAG AA's 4.5:1), and no single colour reaches 4.5:1 on both white and near-black. So the
page says which theme it shows and `for_page_theme(fig, "light" | "dark")` sets every text colour to that
theme's body text (`PAGE_COLORS`); static exports use the light pair on white. The paper and plot
backgrounds stay transparent, so the page shows through.

Log axes: labelled at their decades only (`apply_theme` sets `dtick=1` where the figure chose no ticks).

Colour scales: both heatmap scales are perceptually uniform and rise monotonically in lightness, so they
still read in greyscale (a photocopied handout, a washed-out projector): Viridis for attention weights
(0 dark, 1 bright), Cividis for signed values (negative dark blue, zero neutral grey, positive yellow).

Numbers in heatmap cells: `numbers_fit` decides from the cell's size in pixels whether a number fits at a
readable size; when it does not, the value is only on hover.

Static export lives in `explorer.figures.export`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

# Type sizes in CSS pixels. The base size is what axis titles and legends use; ticks are one step down
# but never under 16 px, so a token label is readable from the back of a lecture hall.
FONT_SIZE = 18
TITLE_SIZE = 24
TICK_SIZE = 16
HOVER_SIZE = 16
CELL_TEXT_SIZE = 16  # numbers written inside heatmap cells
MIN_TEXT_SIZE = 14  # nothing in a figure is smaller: readable on a 1280x720 projector

# Streamlit's font first (the page's look), then fonts with Hangul: the browser and the export's Chromium
# fall back per glyph, so Korean labels are drawn from the system's Noto CJK (Debian `fonts-noto-cjk`),
# Apple's or Windows' Korean fonts, never from a web font.
FONT_FAMILY = (
    '"Source Sans", "Source Sans Pro", "Noto Sans", "Noto Sans CJK KR", "Noto Sans KR", '
    '"Apple SD Gothic Neo", "Malgun Gothic", "DejaVu Sans", sans-serif'
)

# Attention weights: perceptual, colour-blind safe, monotone in lightness (reads in greyscale).
WEIGHT_COLORSCALE = "Viridis"
# Signed values (positional encodings, scores): symmetric range around 0, so 0 is Cividis' neutral grey
# middle; unlike a red/blue diverging scale, -x and +x stay distinct in greyscale.
DIVERGING_COLORSCALE = "Cividis"
# Mid-luminance hues (Tableau-like) for lines and bars, distinct on white and near-black.
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

# Page background and body text of Streamlit's two built-in themes (.streamlit/config.toml changes only
# the primary colour): the figure's text is drawn in the body colour of the theme it sits on.
PAGE_COLORS: dict[str, dict[str, str]] = {
    "light": {"background": "#FFFFFF", "text": "#31333F"},
    "dark": {"background": "#0E1117", "text": "#FAFAFA"},
}

# The template is pinned so a figure looks the same whether or not streamlit was imported first
# (importing streamlit makes its placeholder-colour template the process default).
TEMPLATE = "plotly_white"

# Where a page figure is narrowest: the main column at 1024x768 with the sidebar open. Figure builders
# that write numbers in cells assume this width unless told the real one.
NARROW_FIGURE_WIDTH = 640
# Advance widths in em, rounded up from Source Sans and Noto Sans: digits are tabular, punctuation narrow,
# Hangul and other wide scripts (from U+1100) at 0.95 em, anything else as a wide Latin letter. SentencePiece's
# word mark "▁" (U+2581), in every token label, is drawn as wide as a Latin letter, not a Hangul syllable.
_NARROW_EM = {".": 0.3, ",": 0.3, ":": 0.3, "-": 0.4, "\u2212": 0.6, " ": 0.3, "\u2581": 0.6}
_DIGIT_EM = 0.55
_OTHER_EM = 0.6


def color(i: int) -> str:
    """The i-th palette colour, cycling."""
    return PALETTE[i % len(PALETTE)]


def rgba(hex_color: str, alpha: float) -> str:
    """'#RRGGBB' with an opacity, as a plotly 'rgba(r, g, b, a)' string."""
    h = hex_color.lstrip("#")
    assert len(h) == 6, f"expected a '#RRGGBB' colour, got {hex_color!r}"
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha:.3f})"


def diverging_limit(values: np.ndarray, bound: float | None = None) -> float:
    """How far a diverging colour scale centred on 0 reaches: `bound`, else the largest finite |value|; 1 where that
    is 0 or there is no finite value (a scale from 0 to 0 draws nothing)."""
    if bound is None:
        finite = np.asarray(values, dtype=float)
        finite = finite[np.isfinite(finite)]
        bound = float(np.abs(finite).max()) if finite.size else 1.0
    return float(bound) or 1.0


def colorbar(title: str, **kwargs: Any) -> dict[str, Any]:
    """A colour bar with its title running alongside, so it never collides with the top tick label; its numbers
    at the tick size (plotly's default draws them under 14 px)."""
    return dict(title=dict(text=title, side="right"), thickness=20, tickfont=dict(size=TICK_SIZE), **kwargs)


def escape_labels(labels: Sequence[str]) -> list[str]:
    """Token labels made safe for plotly's pseudo-HTML text: '<s>' would otherwise vanish as a tag."""
    return [html.escape(str(label), quote=False) for label in labels]


def text_width_px(text: str, size: float) -> float:
    """An upper estimate of the width of `text` drawn at `size` px in the theme's sans-serif font."""
    ems = sum(
        _DIGIT_EM if ch.isdigit() else _NARROW_EM.get(ch, 0.95 if ord(ch) >= 0x1100 else _OTHER_EM) for ch in text
    )
    return ems * size


# The narrowest a full-width figure's title may run: the main area at 1024 px beside the sidebar, less plotly's
# side margins.
NARROW_TITLE_PX = 540


def wrap_words(text: str, width: float = NARROW_TITLE_PX, size: float = TITLE_SIZE) -> str:
    """`text` with "<br>" wherever a line would pass `width` px at `size` px: plotly never wraps a title, it runs
    past the figure's edge and is cut there. A line breaks at the first separator (", ", " · ", " — ", ": ")
    after which both halves fit, so "Table 1, d = 512, k = 3" keeps its numbers together; failing that, between
    words. Existing "<br>" are kept; markup counts as text (a line with tags breaks a little early)."""

    def fits(line: str) -> bool:
        return text_width_px(line, size) <= width

    def by_words(line: str) -> list[str]:
        lines, current = [], ""
        for word in line.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and not fits(candidate):
                lines.append(current)
                current = word
            else:
                current = candidate
        return lines + [current]

    def split(line: str) -> list[str]:
        if fits(line):
            return [line]
        parts = [p for p in re.split(r"(?<=, )|(?<= \u00b7 )|(?<= \u2014 )|(?<=: )", line) if p]
        for cut in range(1, len(parts)):
            head, rest = "".join(parts[:cut]).strip(), "".join(parts[cut:]).strip()
            if fits(head) and fits(rest):
                return [head, rest]
        return by_words(line)

    return "<br>".join(out for line in text.split("<br>") for out in split(line))


def numbers_fit(
    rows: int,
    cols: int,
    *,
    height: float,
    width: float = NARROW_FIGURE_WIDTH,
    sample: str = "0.00",
    size: float = CELL_TEXT_SIZE,
    panels: int = 1,
    row_label_chars: int = 8,
    title: bool = False,
) -> bool:
    """Whether a number like `sample` fits inside each cell of a rows x cols heatmap at `size` px.

    The cell size is the plot area of a `width` x `height` px figure (less the margins, the row labels and
    the colour bar, split over `panels` side by side) divided by the cells. The number needs its width
    plus 4 px either side, and 1.3 line heights.
    """
    assert rows >= 1 and cols >= 1 and panels >= 1, f"expected a non-empty grid, got {rows}x{cols}, {panels} panels"
    # apply_theme's margins, grown (plotly's automargin) to hold the row labels, the axis title and the
    # colour bar with its numbers and title.
    left = max(80.0, text_width_px("m" * row_label_chars, TICK_SIZE) + 1.5 * FONT_SIZE + 10)
    right = 110.0
    top = 80.0 if title else 40.0
    bottom = 70.0
    plot_w = (width - left - right) * (1 - 0.03 * (panels - 1)) / panels
    plot_h = height - top - bottom
    cell_w, cell_h = plot_w / cols, plot_h / rows
    return cell_w >= text_width_px(sample, size) + 8 and cell_h >= 1.3 * size


def apply_theme(fig: go.Figure, *, title: str | None = None, height: int | None = None) -> go.Figure:
    """Apply the lecture look to `fig` in place and return it.

    Call it after all subplots exist: axis styling is applied to every axis present at call time.
    """
    text = title or fig.layout.title.text
    # A title broken over lines ("<br>": one that would run past a narrow column) gets more margin per line than
    # the line's height: plotly centres the title in the top margin, and subplot titles sit at its bottom.
    extra_lines = text.count("<br>") if text else 0
    fig.update_layout(
        template=TEMPLATE,
        font=dict(size=FONT_SIZE, family=FONT_FAMILY),
        title=dict(font=dict(size=TITLE_SIZE), **({"text": title} if title else {})),
        paper_bgcolor=TRANSPARENT,
        plot_bgcolor=TRANSPARENT,
        margin=dict(l=80, r=40, t=(80 + 2 * TITLE_SIZE * extra_lines) if text else 40, b=70),
        hoverlabel=dict(font=dict(size=HOVER_SIZE, family=FONT_FAMILY)),
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
    # Log axes labelled at their decades only: plotly's default also labels the 2s and 5s between them
    # ("5 10 2 5 100 2 5 1000"), which reads as a row of unrelated numbers. An axis given its ticks keeps them.
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        if axis.type == "log" and axis.tickvals is None and axis.dtick is None:
            axis.dtick = 1
    # Subplot titles ("Head 1", "Layer 2") are annotations; give them the base size too.
    fig.update_annotations(font_size=FONT_SIZE)
    return fig


LEGEND_ROW_PX = 30  # one legend entry per row, the narrow case (1024 px)


def legend_below(fig: go.Figure) -> go.Figure:
    """The legend at the figure's foot, its entries in rows, with a bottom margin that holds them (one per row,
    the narrow case) under the x axis's numbers and title; in place. Placed in container coordinates: under the
    plot area in the plot's own fraction, it moved with the plot's height, and a figure capped to the first
    screen drew it over the axis title."""
    entries = sum(1 for trace in fig.data if trace.showlegend is not False)
    return fig.update_layout(
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0),
        margin_b=110 + LEGEND_ROW_PX * entries,
    )


def _colorbar_text(bar: Any, text: str) -> None:
    bar.tickfont.color = text
    bar.title.font.color = text


def for_page_theme(fig: go.Figure, mode: str) -> go.Figure:
    """Set every text colour of `fig` to the body text of the "light" or "dark" page theme; in place.

    Streamlit's plotly theme would otherwise draw axis text in a grey that misses 4.5:1 on the light
    page. Heatmap cell numbers keep plotly's automatic black-or-white against each cell's colour.
    """
    assert mode in PAGE_COLORS, f"expected a theme in {tuple(PAGE_COLORS)}, got {mode!r}"
    text, background = PAGE_COLORS[mode]["text"], PAGE_COLORS[mode]["background"]
    fig.update_layout(
        font_color=text,
        title_font_color=text,
        legend_font_color=text,
        legend_title_font_color=text,
        hoverlabel=dict(font_color=text, bgcolor=background),
    )
    fig.update_xaxes(tickfont_color=text, title_font_color=text)
    fig.update_yaxes(tickfont_color=text, title_font_color=text)
    fig.update_annotations(font_color=text)
    for name in fig.layout:
        if name.startswith("coloraxis"):
            _colorbar_text(fig.layout[name].colorbar, text)
    for trace in fig.data:
        if "colorbar" in trace:
            _colorbar_text(trace.colorbar, text)
        if "textfont" in trace and trace.type != "heatmap":
            trace.textfont.color = text
    return fig


def _scaled(size: float | None, factor: float) -> float | None:
    return None if size is None else round(size * factor, 1)


def scale_text(fig: go.Figure, factor: float) -> go.Figure:
    """Every text size in `fig` times `factor`, in place (presenter mode: 16 px ticks become 18 px).

    Sizes left unset follow the layout's base font, which is scaled too.
    """
    if factor == 1:
        return fig
    layout = fig.layout
    layout.font.size = _scaled(layout.font.size or FONT_SIZE, factor)
    for font in (layout.title.font, layout.legend.font, layout.hoverlabel.font):
        font.size = _scaled(font.size, factor)
    fig.for_each_xaxis(
        lambda a: a.update(
            tickfont_size=_scaled(a.tickfont.size, factor), title_font_size=_scaled(a.title.font.size, factor)
        )
    )
    fig.for_each_yaxis(
        lambda a: a.update(
            tickfont_size=_scaled(a.tickfont.size, factor), title_font_size=_scaled(a.title.font.size, factor)
        )
    )
    fig.for_each_annotation(lambda a: a.update(font_size=_scaled(a.font.size, factor)))
    for name in layout:
        if name.startswith("coloraxis"):
            bar = layout[name].colorbar
            bar.tickfont.size = _scaled(bar.tickfont.size, factor)
            bar.title.font.size = _scaled(bar.title.font.size, factor)
    for trace in fig.data:
        if "textfont" in trace and trace.textfont.size is not None:
            trace.textfont.size = _scaled(trace.textfont.size, factor)
        if "colorbar" in trace:
            trace.colorbar.tickfont.size = _scaled(trace.colorbar.tickfont.size, factor)
            trace.colorbar.title.font.size = _scaled(trace.colorbar.title.font.size, factor)
    return fig
