"""Text drawn over other text in a plotly figure: a title over a subplot title, a note over a legend, tick labels
of one panel over the next panel's. Beside `tests/browser/clipping.py`, which finds text cut off.

Every SVG `<text>` of every rendered plotly chart in the main area is measured as the browser draws it: its
own box turned by its transform onto the screen (`getBBox`, `getScreenCTM`), so a slanted tick label is the
slanted box it is drawn in, not the upright box around it (which overlaps its neighbour's whenever labels
slant at 45°, though their letters never meet). Two texts of one chart overlap when
their boxes share more than `TOLERANCE_PX` along every axis: a glyph box includes the line's ascent and
descent, so two stacked tick labels touch without their ink meeting. Left out: empty text, text with nothing rendered
(a closed expander, `display: none`), text drawn fully transparent (plotly's hidden hover labels), and two
tick labels of one axis: on a long sentence a heatmap's neighbouring labels touch (27 source pieces at 1280 px
beside the sidebar), which tests/browser/test_narrow_controls.py holds to readable spacing instead.
"""

from __future__ import annotations

MAIN = '[data-testid="stMain"]'
# A glyph box at the figures' 16-18 px reaches up to 4 px past its ink (ascent, descent, side bearings): the
# x labels of a 27-piece sentence at 1024 px, drawn apart, share 4 px of their boxes.
TOLERANCE_PX = 4.5

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
    // The text's own box, turned as it is drawn (a tick label slanted at 45°): its four corners on the screen.
    const corners = e => {
        const b = e.getBBox(), m = e.getScreenCTM();
        return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
            .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    };
    // How deep two such boxes overlap along each of their edges' normals (separating axes), smallest first:
    // they overlap when every depth is positive. For two upright boxes these are the overlaps across and down.
    const overlap = (p, q) => {
        const depths = [];
        for (const box of [p, q]) {
            for (let k = 0; k < 2; k++) {
                const dx = box[k + 1][0] - box[k][0], dy = box[k + 1][1] - box[k][1];
                const length = Math.hypot(dx, dy) || 1;
                const axis = [-dy / length, dx / length];
                const along = pts => pts.map(([x, y]) => x * axis[0] + y * axis[1]);
                const u = along(p), v = along(q);
                depths.push(Math.min(Math.max(...u), Math.max(...v)) - Math.max(Math.min(...u), Math.min(...v)));
            }
        }
        return depths.sort((x, y) => x - y);
    };
    // The axis a tick label belongs to (plotly draws each in a <g class="xtick">, "ytick", "x2tick", …).
    const tickAxis = e => {
        const g = e.parentElement;
        return g && /^[xy][0-9]*tick$/.test(g.getAttribute('class') || '') ? g.parentElement : null;
    };
    const charts = document.querySelectorAll(`${scope} .js-plotly-plot`);
    charts.forEach((chart, index) => {
        if (!chart.checkVisibility()) return;
        const boxes = [];
        for (const e of chart.querySelectorAll('svg text')) {
            if (!shown(e)) continue;
            const r = e.getBoundingClientRect();
            if (r.width === 0 || r.height === 0) continue;
            boxes.push([e.textContent.trim().slice(0, 40), corners(e), tickAxis(e)]);
        }
        for (let i = 0; i < boxes.length; i++) {
            for (let j = i + 1; j < boxes.length; j++) {
                const [a, p, axisA] = boxes[i], [b, q, axisB] = boxes[j];
                if (axisA && axisA === axisB) continue;  // two tick labels of one axis: see the module doc
                const depths = overlap(p, q);
                if (depths[0] > tolerance) {
                    found.push(`figure ${index + 1} (${name(chart)}): "${a}" overlaps "${b}" by ` +
                               `${Math.round(depths[3])}x${Math.round(depths[0])} px`);
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
