// Injected into every page the browser benchmark opens (benchmarks/browser_pages.py), before Streamlit's own
// scripts. Once per animation frame in which the document changed, it records for every figure in the main
// area (keyed by its element's `st-key-…` class) when it was first drawn with data and when its drawing last
// changed, and the time of the last click or key press. Times are `performance.now()`: milliseconds since
// the navigation started. "Drawn": a plotly figure with its traces in the SVG, a Vega-Lite chart with marks,
// an image loaded; a figure Streamlit has greyed out as stale (its script is still running) is not counted.
(() => {
  if (window.__bench) return;
  const FIGURES = ':is([data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], [data-testid="stImage"], ' +
    '[data-testid="stGraphVizChart"])';
  const bench = (window.__bench = { figures: {}, input: null, running: false, idleAt: null, dirty: true });
  const markers = window.__benchMarkers || {};

  // FNV-1a of the drawing's markup: a new heatmap image, new paths or new text give a new signature.
  const hash = (text) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return (h >>> 0).toString(16) + ":" + text.length;
  };
  const drawing = (element) => {
    const plot = element.matches(".js-plotly-plot") ? element : element.querySelector(".js-plotly-plot");
    if (plot) {
      const traces = plot.querySelector(".main-svg :is(g.trace, g.hm, image, g.barlayer path)");
      return plot._fullData && plot._fullData.length > 0 && traces ? plot : null;
    }
    const marks = element.querySelector("svg :is(g.mark-rect path, g.mark-line path, g.mark-symbol path, g.mark-text text, g.node)");
    if (marks) return marks.closest("svg");
    const image = element.querySelector("img");
    return image && image.complete && image.naturalWidth > 0 ? image : null;
  };
  // The key of the figure's element (`st-key-…`, given where the app names the figure); a figure without one
  // (an Altair chart) is named by its kind and place among the page's figures: "stVegaLiteChart#0".
  const keyOf = (element, index) => {
    const container = element.closest('[data-testid="stElementContainer"]');
    const key = Array.from(container ? container.classList : []).find((c) => c.startsWith("st-key-"));
    return key ? key.slice(7) : `${element.getAttribute("data-testid")}#${index}`;
  };
  const seen = (key, signature, now) => {
    const figure = bench.figures[key];
    if (!figure) bench.figures[key] = { signature, first: now, changed: now };
    else if (figure.signature !== signature) Object.assign(figure, { signature, changed: now });
  };
  const frame = (now) => {
    const running = !!document.querySelector('[data-testid="stStatusWidget"], [data-testid="stSkeleton"]');
    if (bench.running && !running) bench.idleAt = now;
    bench.running = running;
    if (bench.dirty) {
      bench.dirty = false;
      const figures = document.querySelectorAll(`[data-testid="stMain"] ${FIGURES}`);
      figures.forEach((element, index) => {
        if (element.closest('[data-stale="true"]') || element.getBoundingClientRect().width === 0) return;
        const shown = drawing(element);
        if (shown) seen(keyOf(element, index), hash(shown.tagName === "IMG" ? shown.src : shown.innerHTML), now);
      });
      for (const [key, selector] of Object.entries(markers)) {
        const element = document.querySelector(selector);
        if (element && !element.closest('[data-stale="true"]')) seen(key, "shown", now);
      }
    }
    requestAnimationFrame(frame);
  };
  new MutationObserver(() => (bench.dirty = true)).observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    characterData: true,
  });
  const input = () => (bench.input = performance.now());
  addEventListener("pointerdown", input, true);
  addEventListener("keydown", input, true);
  requestAnimationFrame(frame);
})();
