"""Text drawn over other text in a plotly figure: a title over a subplot title, a note over a legend, tick labels
of one panel over the next panel's. Beside `tests/browser/clipping.py`, which finds text cut off.

Every SVG `<text>` of every rendered plotly chart in the main area is measured as the browser draws it
(`getBoundingClientRect`, so transforms and rotated tick labels count). Two texts of one chart overlap when
their boxes share more than `TOLERANCE_PX` both ways: a glyph box includes the line's ascent and descent, so
two stacked tick labels touch without their ink meeting. Left out: empty text, text with nothing rendered
(a closed expander, `display: none`) and text drawn fully transparent (plotly's hidden hover labels).
"""

from __future__ import annotations

MAIN = '[data-testid="stMain"]'
TOLERANCE_PX = 2

_OVERLAPS_JS = """([scope, tolerance]) => {
    const found = [];
    const name = chart => {
        const keyed = chart.closest('[class*="st-key-"]');
        const match = keyed && String(keyed.className).match(/st-key-([\\w-]+)/);
        return match ? match[1] : '(unkeyed)';
    };
    const shown = e => {
        if (!e.textContent.trim() || !e.checkVisibility()) return false;
        for (let p = e; p && p.tagName.toLowerCase() !== 'svg'; p = p.parentElement) {
            const s = getComputedStyle(p);
            if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') return false;
        }
        const s = getComputedStyle(e);
        return !(s.fillOpacity === '0' || s.fill === 'none' || s.fill === 'transparent');
    };
    const charts = document.querySelectorAll(`${scope} .js-plotly-plot`);
    charts.forEach((chart, index) => {
        if (!chart.checkVisibility()) return;
        const boxes = [];
        for (const e of chart.querySelectorAll('svg text')) {
            if (!shown(e)) continue;
            const r = e.getBoundingClientRect();
            if (r.width === 0 || r.height === 0) continue;
            boxes.push([e.textContent.trim().slice(0, 40), r]);
        }
        for (let i = 0; i < boxes.length; i++) {
            for (let j = i + 1; j < boxes.length; j++) {
                const [a, p] = boxes[i], [b, q] = boxes[j];
                const across = Math.min(p.right, q.right) - Math.max(p.left, q.left);
                const down = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
                if (across > tolerance && down > tolerance) {
                    found.push(`figure ${index + 1} (${name(chart)}): "${a}" overlaps "${b}" by ` +
                               `${Math.round(across)}x${Math.round(down)} px`);
                }
            }
        }
    });
    return found;
}"""


def text_overlaps(page, scope: str = MAIN) -> list[str]:
    """One line per pair of overlapping texts in the plotly figures under `scope` (the page's main area): the
    figure (its number on the page and its Streamlit key), both texts, and by how much they overlap."""
    return page.evaluate(_OVERLAPS_JS, [scope, TOLERANCE_PX])
