"""What a projector shows cut off: elements whose box passes out of an ancestor that clips or scrolls, and
button rows that break. Used by the tour's and the pages' browser tests beside `overflowing` and `cut_text`
from tests/browser/helpers.py, which see only what passes the window's right edge or ends in an ellipsis.

A formula in a box that scrolls sideways counts as clipped: on a projector nobody scrolls a formula.
"""

from __future__ import annotations

# Elements passing out of a clipping or scrolling ancestor, in the page's main area. Left out, each on purpose:
# - the page's own scrollers (stMain and those above it): everything below the first screen "passes" them;
# - what lies inside an SVG (plotly clips its own plot area; `svg_text_outside` checks the text of figures);
# - KaTeX's MathML copy (`.katex-mathml`), kept one pixel wide for screen readers;
# - data frames: a table that scrolls sideways is a table, and it draws on a canvas;
# - what a visually hidden wrapper (1 px, for screen readers and keyboards) holds: it is not meant to be seen;
# - what Chromium does not render (`checkVisibility()` false): a closed expander's content keeps a box under
#   `content-visibility: hidden` but is not drawn, and its figures re-lay out only once it opens.
# Only the outermost cut element is named (its descendants are cut with it).
_CLIPPED_JS = """(scope) => {
    const found = [], reported = new Set();
    const root = document.querySelector(scope);
    if (!root) return found;
    const pageScrollers = new Set();
    for (let p = root; p; p = p.parentElement) pageScrollers.add(p);
    const name = e => e.tagName.toLowerCase() + (e.dataset && e.dataset.testid ? `[${e.dataset.testid}]` : '') +
        (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : '');
    for (const e of root.querySelectorAll('*')) {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || !e.checkVisibility()) continue;
        if (e.closest('.katex-mathml, [data-testid^="stDataFrame"]')) continue;
        if (e.tagName.toLowerCase() !== 'svg' && e.closest('svg')) continue;
        let skip = false;
        for (let p = e.parentElement; p && !skip; p = p.parentElement) skip = reported.has(p);
        if (skip) continue;
        for (let p = e.parentElement; p && !pageScrollers.has(p); p = p.parentElement) {
            const s = getComputedStyle(p);
            const q = p.getBoundingClientRect();
            if (q.width <= 2 || q.height <= 2) break;  // a visually hidden wrapper (a native input under a widget)
            const sideways = s.overflowX !== 'visible' && Math.max(r.right - q.right, q.left - r.left) > 1;
            const upright = s.overflowY !== 'visible' && Math.max(r.bottom - q.bottom, q.top - r.top) > 1;
            if (sideways || upright) {
                reported.add(e);
                const text = (e.textContent || '').replace(/[\\u200b\\s]+/g, ' ').trim().slice(0, 40);
                found.push(`${name(e)} "${text}" (${Math.round(r.left)}..${Math.round(r.right)} x ` +
                    `${Math.round(r.top)}..${Math.round(r.bottom)}) cut by ${name(p)} (${Math.round(q.left)}..` +
                    `${Math.round(q.right)} x ${Math.round(q.top)}..${Math.round(q.bottom)})`);
                break;
            }
        }
    }
    return found.slice(0, 20);
}"""

# A segmented control is one row of joined buttons; when its options wrap onto a second row the shared
# borders fall apart and an option reads as cut (a joined button's right border is transparent,
# so the first row ends without one).
_BROKEN_ROWS_JS = """(scope) => {
    const found = [];
    for (const group of document.querySelectorAll(`${scope} [data-testid="stButtonGroup"]`)) {
        const buttons = Array.from(group.querySelectorAll('button[data-variant="segmented_control"]'))
            .filter(b => b.getBoundingClientRect().height > 0);
        const tops = new Set(buttons.map(b => Math.round(b.getBoundingClientRect().top / 4)));
        if (tops.size > 1) {
            const label = group.querySelector('[data-testid="stWidgetLabel"]');
            const text = buttons.map(b => b.textContent.trim()).join(' | ').slice(0, 60);
            found.push(`segmented control "${label ? label.textContent.trim() : ''}" on ${tops.size} rows: ${text}`);
        }
    }
    return found;
}"""

# The chart's Streamlit key (`st-key-<key>` on the element or its wrapper), to say which figure a finding is in.
_FIGURE_NAME_JS = """const figureName = chart => {
        const keyed = chart.closest('[class*="st-key-"]');
        const match = keyed && String(keyed.className).match(/st-key-([\\w-]+)/);
        return match ? match[1] : '(unkeyed)';
    };"""

# Text of plotly figures drawn outside the figure's own SVG (the browser cuts it off there).
_SVG_TEXT_OUTSIDE_JS = (
    """(scope) => {
    const found = [];
    """
    + _FIGURE_NAME_JS
    + """
    for (const chart of document.querySelectorAll(`${scope} [data-testid="stPlotlyChart"]`)) {
        if (!chart.checkVisibility()) continue;  // not rendered (a closed expander)
        const svg = chart.querySelector('svg.main-svg');
        if (!svg) continue;
        const box = svg.getBoundingClientRect();
        for (const e of chart.querySelectorAll('svg.main-svg text')) {
            const r = e.getBoundingClientRect();
            if (r.width === 0 || !e.textContent.trim()) continue;
            const out = Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom);
            if (out > 1) found.push(`figure ${figureName(chart)} text "${e.textContent.trim().slice(0, 40)}" ` +
                                    `${Math.round(out)} px outside the figure`);
        }
    }
    return found.slice(0, 20);
}"""
)

# Text plotly draws inside a plot area that clips (`cliponaxis`, the default for scatter text): the part past
# the axes' edge is cut by the subplot's clip-path, which the element's box does not show. The plot area is
# the subplot's drag rectangle (`.nsewdrag[data-subplot=xy]`); the clip-path's id ends in `<subplot>plot`.
_PLOT_TEXT_CLIPPED_JS = (
    """(scope) => {
    const found = [];
    """
    + _FIGURE_NAME_JS
    + """
    for (const chart of document.querySelectorAll(`${scope} [data-testid="stPlotlyChart"]`)) {
        if (!chart.checkVisibility()) continue;  // not rendered (a closed expander)
        for (const e of chart.querySelectorAll('svg.main-svg .cartesianlayer text')) {
            const r = e.getBoundingClientRect();
            if (r.width === 0 || !e.textContent.trim()) continue;
            let clip = null;
            for (let p = e.parentElement; p && !clip; p = p.parentElement) {
                const url = p.getAttribute && p.getAttribute('clip-path');
                const match = url && url.match(/(x\\d*y\\d*)plot/);
                if (match) clip = match[1];
            }
            if (!clip) continue;
            const area = chart.querySelector(`.nsewdrag[data-subplot="${clip}"]`);
            if (!area) continue;
            const q = area.getBoundingClientRect();
            const out = Math.max(q.left - r.left, r.right - q.right, q.top - r.top, r.bottom - q.bottom);
            if (out > 1) found.push(`figure ${figureName(chart)} text "${e.textContent.trim().slice(0, 40)}" cut ` +
                                    `by the plot area (${Math.round(out)} px)`);
        }
    }
    return found.slice(0, 20);
}"""
)

MAIN = '[data-testid="stMain"]'


def clipped(page, scope: str = MAIN) -> list[str]:
    """Elements under `scope` cut by an ancestor that clips or scrolls (see the notes above)."""
    return page.evaluate(_CLIPPED_JS, scope)


def broken_button_rows(page, scope: str = MAIN) -> list[str]:
    """Segmented controls whose options wrapped onto more than one row."""
    return page.evaluate(_BROKEN_ROWS_JS, scope)


def svg_text_outside(page, scope: str = MAIN) -> list[str]:
    """Text of plotly figures that lies (partly) outside the figure's SVG."""
    return page.evaluate(_SVG_TEXT_OUTSIDE_JS, scope)


def plot_text_clipped(page, scope: str = MAIN) -> list[str]:
    """Text of plotly traces cut by the plot area it is clipped to."""
    return page.evaluate(_PLOT_TEXT_CLIPPED_JS, scope)


def everything_cut(page, scope: str = MAIN) -> list[str]:
    return (
        clipped(page, scope)
        + broken_button_rows(page, scope)
        + svg_text_outside(page, scope)
        + plot_text_clipped(page, scope)
    )
