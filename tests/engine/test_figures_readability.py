"""Figures readable on a projector and in Korean.

Every figure builder is checked with small made-up inputs: text sizes, text contrast on the light and the
dark page, greyscale-safe colour scales, cell numbers only where they fit, Korean labels, and no remote
resource in what the page is sent. The Hangul export test drives kaleido's Chromium (slow).
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.colors import get_colorscale, sample_colorscale

from explorer.decoding import beam_search
from explorer.figures import (
    attention_grid,
    attention_heatmap,
    embedding_norms_figure,
    head_view,
    pe_curves,
    pe_heatmap,
    pe_side_by_side,
    similarity_by_offset,
    similarity_heatmap,
)
from explorer.figures.beam_tree import beam_tree_figure
from explorer.figures.compare import Panel, compare_heads
from explorer.figures.complexity import measured_figure, n_grid, operations_figure, path_length_figure
from explorer.figures.export import download_config, figure_to_png, find_browser, hangul_font_available
from explorer.figures.step_by_step import (
    query_row_figure,
    scaling_figure,
    softmax_comparison,
    stage_matrices,
    values_heatmap,
)
from explorer.figures.theme import (
    CELL_TEXT_SIZE,
    DIVERGING_COLORSCALE,
    MIN_TEXT_SIZE,
    NARROW_FIGURE_WIDTH,
    PAGE_COLORS,
    WEIGHT_COLORSCALE,
    for_page_theme,
    numbers_fit,
    text_width_px,
)
from explorer.figures.training import (
    attention_evolution,
    bleu_curve,
    loss_curve,
    lr_curve,
    lr_schedule_curve,
    throughput_curve,
)
from explorer.i18n import gettext_for
from tests.engine.test_beam_tree_figure import BOS, EOS, LABELS, TableScorer

Q = ["<s>", "\u2581a", "\u2581cat", "\u2581sat"]
K = ["\u2581a", "\u2581dog", "\u2581ran", "</s>", "."]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def all_figures(lang: str) -> dict[str, go.Figure]:
    """One figure from every builder this package owns, in `lang`."""
    rng = np.random.default_rng(0)
    w = _softmax(rng.normal(size=(2, 3, len(Q), len(K))))  # (L, H, q, k)
    angle = np.arange(10)[:, None] / 10000 ** (np.arange(4)[None, :] / 4)
    pe = np.concatenate([np.sin(angle), np.cos(angle)], axis=1)  # (positions, d_model)
    unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    sim = unit @ unit.T
    (result,) = beam_search(TableScorer(), 1, 2, BOS, EOS, max_len=10, trace=True)
    rows = [
        dict(
            layer=layer,
            n=n,
            d=16,
            kernel=3,
            device="cpu",
            depth=1,
            forward_ms=n * 0.1,
            train_ms=n * 0.3,
            memory_mb=n * 0.01,
            memory_measure="cpu_saved_for_backward",
        )
        for layer in ("self_attention", "recurrent")
        for n in (8, 32)
    ]
    scores = rng.normal(size=(len(Q), len(K)))
    masked = np.where(np.tril(np.ones_like(scores)) > 0, scores, -np.inf)
    steps = [100, 200, 300]
    return {
        "attention_heatmap": attention_heatmap(w[0, 0], Q, K, title="t", show_values=True, lang=lang),
        "attention_grid": attention_grid(w, Q, K, lang=lang),
        "head_view": head_view(w[0], Q, K, lang=lang),
        "compare_heads": compare_heads([Panel(w[0, 0], Q, K, "a"), Panel(w[1, 1], Q, K, "b")], lang=lang),
        "beam_tree": beam_tree_figure(result.trace, LABELS, lang=lang),
        "operations": operations_figure(n_grid(64, 16, points=20), 16, highlight_n=64, lang=lang),
        "measured": measured_figure(rows, "forward_ms", lang=lang),
        "path_length": path_length_figure(2, 9, 12, lang=lang),
        "pe_heatmap": pe_heatmap(pe, lang=lang),
        "pe_curves": pe_curves(pe, [0, 3], lang=lang),
        "pe_side_by_side": pe_side_by_side(pe, pe * 2, lang=lang),
        "similarity_heatmap": similarity_heatmap(sim, lang=lang),
        "similarity_by_offset": similarity_by_offset(sim, lang=lang),
        "embedding_norms": embedding_norms_figure([1.0] * 4, [0.5] * 4, [1.2] * 4, Q, lang=lang),
        "values_heatmap": values_heatmap(scores[:2], Q[:2], list(K), title="K", lang=lang),
        "stage_matrices": stage_matrices(scores, scores / 2, masked, _softmax(masked), Q, K, 1, lang=lang),
        "query_row": query_row_figure(scores[1], np.isfinite(masked[1]), _softmax(masked)[1], K, lang=lang),
        "scaling": scaling_figure([1, 4, 16], {"Var": [1, 4, 16]}, {"Var": [1, 1, 1]}, lang=lang),
        "softmax_comparison": softmax_comparison(np.array([0.7, 0.3]), np.array([0.5, 0.5]), d_k=4, lang=lang),
        "loss": loss_curve(steps, [3.0, 2.0, 1.5], steps, [3.1, 2.2, 1.8], lang=lang),
        "lr": lr_curve(steps, [1e-4, 2e-4, 1.5e-4], warmup_steps=200, lang=lang),
        "lr_schedule": lr_schedule_curve(steps[:2], [1e-4, 2e-4], steps, [1e-4, 2e-4, 1.5e-4], 200, lang=lang),
        "bleu": bleu_curve(steps, [1.0, 10.0, 20.0], lang=lang),
        "throughput": throughput_curve(steps, [1000.0, 1100.0, 1050.0], lang=lang),
        "evolution": attention_evolution([w[0, 0]] * 2, [100, 200], [Q, Q], K, lang=lang),
    }


@pytest.fixture(scope="module")
def figures_en() -> dict[str, go.Figure]:
    return all_figures("en")


@pytest.fixture(scope="module")
def figures_ko() -> dict[str, go.Figure]:
    return all_figures("ko")


def _walk(node, path=()):
    """Yield (path, value) for every leaf of a figure's JSON."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, path + (i,))
    else:
        yield path, node


def _spec(fig: go.Figure) -> dict:
    spec = fig.to_plotly_json()
    spec["layout"].pop("template", None)  # plotly's own template: the figure's settings override it
    return json.loads(json.dumps(spec, default=str))


# ---- sizes ------------------------------------------------------------------------------------------------


def test_every_text_in_every_figure_is_at_least_14_px(figures_en):
    for name, fig in figures_en.items():
        spec = _spec(fig)
        sizes = [
            (p, v)
            for p, v in _walk(spec)
            if len(p) >= 2 and p[-1] == "size" and any(isinstance(k, str) and "font" in k for k in p)
        ]
        assert sizes, f"{name}: no font size set"
        small = [(p, v) for p, v in sizes if isinstance(v, (int, float)) and v < MIN_TEXT_SIZE]
        small += [(p, v) for p, v in sizes if isinstance(v, list) and min(v) < MIN_TEXT_SIZE]
        assert not small, f"{name}: text under {MIN_TEXT_SIZE} px: {small}"
        assert spec["layout"]["font"]["size"] >= MIN_TEXT_SIZE


# ---- contrast ---------------------------------------------------------------------------------------------


def _rgb(colour: str) -> tuple[float, float, float]:
    colour = colour.strip()
    if colour.startswith("#"):
        h = colour[1:]
        h = "".join(c * 2 for c in h) if len(h) == 3 else h[:6]
        return tuple(int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]
    numbers = [float(x) for x in re.findall(r"[\d.]+", colour)]
    assert colour.startswith("rgb") and len(numbers) >= 3, f"unexpected colour {colour!r}"
    assert len(numbers) == 3 or numbers[3] >= 0.999, f"text colour {colour!r} is translucent"
    return numbers[0] / 255, numbers[1] / 255, numbers[2] / 255


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(colour)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_the_page_themes_text_reaches_wcag_aa():
    for mode, colours in PAGE_COLORS.items():
        assert _contrast(colours["text"], colours["background"]) >= 4.5, mode
    # Why figures set their own text colour: Streamlit's plotly theme draws axis text in gray70 on the light page.
    assert _contrast("#808495", PAGE_COLORS["light"]["background"]) < 4.5


@pytest.mark.parametrize("mode", sorted(PAGE_COLORS))
def test_every_figure_text_reaches_4_5_to_1_on_the_page(figures_en, mode):
    background = PAGE_COLORS[mode]["background"]
    for name, fig in figures_en.items():
        themed = for_page_theme(go.Figure(fig), mode)
        spec = _spec(themed)
        # Everything Streamlit's theme would otherwise colour is set: axis ticks and titles, colour bars.
        for key, axis in spec["layout"].items():
            if re.fullmatch(r"[xy]axis\d*", key) and axis.get("visible", True) is not False:
                assert axis["tickfont"]["color"] == PAGE_COLORS[mode]["text"], f"{name}.{key}"
        colours = [
            (p, v)
            for p, v in _walk(spec)
            if p and p[-1] == "color" and any(isinstance(k, str) and "font" in k for k in p) and "hoverlabel" not in p
        ]
        assert colours, name
        for path, value in colours:
            for colour in value if isinstance(value, list) else [value]:
                assert _contrast(colour, background) >= 4.5, f"{name}: {path} = {colour} on {background}"


def test_for_page_theme_leaves_heatmap_numbers_to_plotly_per_cell_contrast(figures_en):
    themed = for_page_theme(go.Figure(figures_en["attention_heatmap"]), "dark")
    (heatmap,) = [t for t in themed.data if t.type == "heatmap"]
    assert heatmap.texttemplate and heatmap.textfont.color is None  # plotly picks black or white per cell
    # Black or white reaches 4.5:1 on every colour of the weight scale.
    for colour in sample_colorscale(get_colorscale(WEIGHT_COLORSCALE), list(np.linspace(0, 1, 33))):
        assert max(_contrast(colour, "#000000"), _contrast(colour, "#FFFFFF")) >= 4.5


# ---- colour scales ----------------------------------------------------------------------------------------


def _lightness(colour: str) -> float:
    """CIE L* (0 black .. 100 white): how light a colour looks, which is what greyscale keeps."""
    y = _luminance(colour)
    return 116 * (y ** (1 / 3) if y > 0.008856 else 7.787 * y + 16 / 116) - 16


@pytest.mark.parametrize("scale", [WEIGHT_COLORSCALE, DIVERGING_COLORSCALE])
def test_heatmap_scales_rise_monotonically_and_evenly_in_lightness(scale):
    lightness = [_lightness(c) for c in sample_colorscale(get_colorscale(scale), list(np.linspace(0, 1, 65)))]
    steps = np.diff(lightness)
    assert (steps > 0).all(), f"{scale}: lightness is not monotone, so greyscale loses the order"
    assert lightness[-1] - lightness[0] > 50, f"{scale}: too little lightness range to read in greyscale"
    assert steps.max() / steps.min() < 4, f"{scale}: uneven lightness steps, not perceptually uniform"


def test_the_old_red_blue_scale_fails_the_greyscale_check():
    """The check can fail: RdBu (the previous signed scale) maps -1 and +1 to similar greys."""
    lightness = [_lightness(c) for c in sample_colorscale(get_colorscale("RdBu_r"), list(np.linspace(0, 1, 65)))]
    assert not (np.diff(lightness) > 0).all()


def test_figures_use_the_theme_scales(figures_en):
    scales = set()
    for fig in figures_en.values():
        spec = _spec(fig)
        scales |= {_stops(v) for p, v in _walk_dicts(spec) if p and p[-1] == "colorscale"}
    allowed = {_stops(get_colorscale(WEIGHT_COLORSCALE)), _stops(get_colorscale(DIVERGING_COLORSCALE))}
    assert scales and scales <= allowed, scales


def _stops(scale) -> tuple:
    return tuple((round(float(at), 4), str(colour).lower()) for at, colour in scale)


def _walk_dicts(node, path=()):
    """Yield (path, value) for every value of a figure's JSON, lists of scale stops included whole."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield path + (key,), value
            yield from _walk_dicts(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk_dicts(value, path + (i,))


# ---- numbers in cells -------------------------------------------------------------------------------------


def test_numbers_fit_follows_the_cell_size_in_pixels():
    # A 4 x 5 matrix in the narrowest page column: cells of about 75 x 55 px hold "0.42" at 16 px.
    assert numbers_fit(4, 5, height=380)
    # 12 keys at 1024x768 (sidebar open): about 30 px per cell, "0.42" needs 36 px and more at 16 px.
    assert not numbers_fit(12, 12, height=588)
    assert numbers_fit(12, 12, height=588, width=1200)  # the same matrix on a wide window
    assert not numbers_fit(4, 5, height=380, panels=4)  # four panels side by side share the width
    assert not numbers_fit(20, 3, height=300)  # rows of 10 px are too short for 16 px text
    # Consistency with the cell geometry: a fit means the text's width fits the column.
    for cols in range(1, 40):
        cell = (NARROW_FIGURE_WIDTH - 80 - 110) / cols
        if numbers_fit(2, cols, height=400, row_label_chars=1):
            assert cell >= text_width_px("0.00", CELL_TEXT_SIZE) + 8


def _texttemplates(fig: go.Figure) -> list:
    return [t.texttemplate for t in fig.data if t.type == "heatmap"]


def test_attention_heatmap_writes_numbers_only_when_they_fit():
    rng = np.random.default_rng(1)
    small = _softmax(rng.normal(size=(4, 5)))
    large = _softmax(rng.normal(size=(12, 12)))
    labels = [f"t{i}" for i in range(12)]
    assert _texttemplates(attention_heatmap(small, Q, K, show_values=True)) == ["%{z:.2f}"]
    # The translate page asks for values up to 12 keys: at 1024 px they would overlap, so hover only.
    assert _texttemplates(attention_heatmap(large, labels, labels, show_values=True)) == [None]
    assert _texttemplates(attention_heatmap(large, labels, labels, show_values=True, width=1400)) == ["%{z:.2f}"]
    assert _texttemplates(attention_heatmap(small, Q, K, show_values=None)) == ["%{z:.2f}"]  # auto
    assert _texttemplates(attention_heatmap(small, Q, K)) == [None]  # default: off
    fig = attention_heatmap(large, labels, labels, show_values=True)
    assert "%{z:.4f}" in fig.data[0].hovertemplate  # the value stays on hover
    assert fig.data[0].textfont.size >= MIN_TEXT_SIZE


def test_stage_matrices_and_values_heatmap_write_numbers_only_when_they_fit():
    rng = np.random.default_rng(2)
    labels = [f"t{i}" for i in range(12)]
    big = rng.normal(size=(12, 12))
    # Twelve keys in each of four panels: the old rule (q, k <= 12) wrote numbers into 12 px wide cells.
    assert _texttemplates(stage_matrices(big, big, big, _softmax(big), labels, labels, 0)) == [None] * 4
    tiny = rng.normal(size=(2, 2))
    assert (
        _texttemplates(stage_matrices(tiny, tiny, tiny, _softmax(tiny), ["a", "b"], ["a", "b"], 0)) == ["%{z:.2f}"] * 4
    )
    assert _texttemplates(values_heatmap(rng.normal(size=(1, 8)), ["q"], title="q")) == ["%{z:.2f}"]
    assert _texttemplates(values_heatmap(rng.normal(size=(1, 64)), ["q"], title="q")) == [None]


# ---- Korean -----------------------------------------------------------------------------------------------


def _texts(fig: go.Figure) -> set[str]:
    """Every piece of visible text: title, axis titles, legend entries, annotations, colour bar titles."""
    spec = _spec(fig)
    out = set()
    for path, value in _walk(spec):
        if not isinstance(value, str) or not path:
            continue
        key = path[-1]
        parent = path[-2] if len(path) > 1 else None
        if (key == "text" and parent == "title") or key == "name" or (key == "text" and "annotations" in path):
            out.add(value)
    for trace in fig.data:
        out.add(str(trace.hovertemplate or ""))
    return out


def test_korean_figures_show_no_english_catalogue_text(figures_en, figures_ko):
    ko = gettext_for("ko")
    for name in figures_en:
        english, korean = _texts(figures_en[name]), _texts(figures_ko[name])
        assert any(re.search("[\uac00-\ud7a3]", text) for text in korean), f"{name}: no Hangul in the Korean figure"
        leftovers = [text for text in english if ko(text) != text and text in korean]
        assert not leftovers, f"{name}: English left in the Korean figure: {leftovers}"


def test_korean_axis_titles_follow_the_glossary(figures_ko):
    fig = figures_ko["attention_heatmap"]
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("키", "쿼리")
    assert "헤드 1" in {a.text for a in figures_ko["attention_grid"].layout.annotations}
    assert figures_ko["attention_heatmap"].data[0].colorbar.title.text == "가중치"


# ---- offline ----------------------------------------------------------------------------------------------


def test_nothing_in_a_figure_or_its_config_asks_for_a_remote_resource(figures_en, figures_ko):
    config = download_config("Encoder self-attention")
    assert not {"mathjax", "topojsonURL", "topojson", "locale"} & set(config)
    for fig in list(figures_en.values()) + list(figures_ko.values()):
        text = fig.to_json()
        assert "http://" not in text and "https://" not in text and "url(" not in text
        assert "mapbox" not in text and "geo" not in fig.layout.to_plotly_json()


# ---- Hangul in exports ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(find_browser() is None, reason="static export needs a local Chrome/Chromium")
@pytest.mark.skipif(not hangul_font_available(), reason="needs a font with Hangul: apt-get install fonts-noto-cjk")
def test_png_export_draws_hangul_glyphs_not_tofu():
    from PIL import Image

    def title_pixels(title: str) -> np.ndarray:
        fig = attention_heatmap(np.full((2, 2), 0.5), ["a", "b"], ["c", "d"], title=title, lang="ko")
        png = figure_to_png(fig, scale=1, width=560, height=380)
        return np.asarray(Image.open(io.BytesIO(png)).convert("L"))[:70]  # the title band

    first, second = title_pixels("어텐션 가중치"), title_pixels("인코더 디코더")
    ink = first < 128
    assert ink.sum() > 200, "no title drawn"
    # Missing glyphs are drawn as identical boxes (tofu): two different strings of the same length
    # would give the same pixels. Real glyphs differ.
    assert (first != second).sum() > 300
    boxes = title_pixels("\u25a1\u25a1\u25a1 \u25a1\u25a1\u25a1")  # what tofu looks like
    assert (first != boxes).sum() > 300
