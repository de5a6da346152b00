"""Figures read on a projector: log axes labelled at their decades only, and every text colour at WCAG contrast
4.5:1 or more against the page on both themes (the colours a figure is shown in, `for_page_theme`) and against
white (the static exports, `apply_theme` alone)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.complexity import measured_figure, n_grid, operations_figure, path_length_figure
from explorer.figures.theme import PAGE_COLORS, apply_theme, for_page_theme
from explorer.figures.tour_training import measured_figure as tour_measured_figure
from explorer.figures.tour_training import operations_figure as tour_operations_figure
from explorer.figures.training import attention_evolution, bleu_curve, loss_curve, lr_schedule_curve, throughput_curve

WCAG_AA = 4.5


def _measured_rows() -> list[dict]:
    layers = ("self_attention", "recurrent", "convolutional_contiguous", "convolutional_dilated")
    return [
        dict(layer=layer, n=n, forward_ms=0.3 + 0.01 * n * (i + 1), train_ms=0.02 * n, memory_mb=1.0, depth=1, d=128,
             kernel=3, device="cpu", memory_measure=None)
        for i, layer in enumerate(layers)
        for n in (16, 32, 64, 128)
    ]  # fmt: skip


def _figures() -> dict[str, go.Figure]:
    rng = np.random.default_rng(0)
    source = ["▁a", "▁b", "▁c", "</s>"]
    return {
        "operations": operations_figure(n_grid(128, 512), 512, 3, 16, highlight_n=128),
        "measured": measured_figure(_measured_rows(), "forward_ms"),
        "path length": path_length_figure(0, 40, 48, 3, 4),
        "loss": loss_curve([1, 2, 3], [3.0, 2.0, 1.5], [3], [1.8]),
        "learning rate": lr_schedule_curve([1, 2], [0.1, 0.2], [1, 2, 3, 4], [0.1, 0.2, 0.15, 0.12], 2),
        "BLEU": bleu_curve([10, 20], [1.0, 5.0]),
        "throughput": throughput_curve([1, 2], [100.0, 120.0]),
        "evolution": attention_evolution(
            [rng.dirichlet(np.ones(4), size=3) for _ in range(3)], [0, 10, 20], [["▁c", "▁b", "▁a"]] * 3, source
        ),
    }


def _tour_log_figures() -> dict[str, go.Figure]:
    rows = [{**row, "label": row["layer"]} for row in _measured_rows()]
    return {"tour operations": tour_operations_figure(20, 512), "tour measured": tour_measured_figure(rows, 128)}


def _log_axes(fig: go.Figure) -> list:
    return [axis for axis in [*fig.select_xaxes(), *fig.select_yaxes()] if axis.type == "log"]


def test_log_axes_are_labelled_at_their_decades_only():
    figures = {**_figures(), **_tour_log_figures()}
    logs = {name: _log_axes(fig) for name, fig in figures.items()}
    assert logs["operations"] and logs["measured"], "the Complexity figures draw on log axes"
    for name, axes in logs.items():
        for axis in axes:
            # dtick 1 on a log axis: a tick (and label) at every power of ten and nowhere else ("5 10 2 5 100").
            assert axis.tickvals is not None or axis.dtick == 1, f"{name}: log axis labelled between decades"


def test_measured_figure_spans_whole_decades():
    axis = measured_figure(_measured_rows(), "forward_ms").layout.yaxis
    low, high = axis.range
    assert float(low).is_integer() and float(high).is_integer() and high - low >= 1, axis.range


def test_apply_theme_gives_an_unticked_log_axis_decades():
    fig = apply_theme(go.Figure(go.Scatter(x=[1, 10, 100], y=[1, 2, 3])).update_xaxes(type="log"))
    assert fig.layout.xaxis.dtick == 1
    ticked = apply_theme(go.Figure(go.Scatter(x=[1, 2, 4], y=[1, 2, 3])).update_xaxes(type="log", tickvals=[1, 2, 4]))
    assert ticked.layout.xaxis.dtick is None


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance of '#rrggbb' or 'rgb(r, g, b)'."""
    if colour.startswith("#"):
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    else:
        inside = colour[colour.index("(") + 1 : colour.index(")")]
        parts = [float(p) for p in inside.split(",")]
        assert len(parts) == 3 or parts[3] == 1, f"text drawn translucent: {colour}"
        channels = [p / 255 for p in parts[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(foreground: str, background: str) -> float:
    light, dark = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_colours(fig: go.Figure) -> dict[str, str]:
    """Where each text of `fig` is drawn -> its colour, an unset colour resolved to the one it inherits."""
    layout = fig.layout
    base = layout.font.color or fig.layout.template.layout.font.color
    assert base, "the figure's base text colour is set (by the theme or the template)"
    found = {"font": base, "title": layout.title.font.color or base, "legend": layout.legend.font.color or base}
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        name = axis.plotly_name
        found[f"{name} ticks"] = axis.tickfont.color or base
        found[f"{name} title"] = axis.title.font.color or base
    for i, note in enumerate(layout.annotations):
        found[f"annotation {i} {note.text!r}"] = note.font.color or base
    for trace in fig.data:
        if "textfont" in trace and trace.type != "heatmap" and trace.text is not None:
            found[f"{trace.type} {trace.name!r} text"] = trace.textfont.color or base
    if "coloraxis" in layout and layout.coloraxis.colorbar is not None:
        found["colour bar"] = layout.coloraxis.colorbar.tickfont.color or base
    return found


def test_contrast_helper_matches_wcag():
    assert contrast("#000000", "#FFFFFF") == pytest.approx(21)
    assert contrast("#808495", "#FFFFFF") < WCAG_AA  # Streamlit's plotly axis grey on white: the weak text seen


@pytest.mark.parametrize("mode", sorted(PAGE_COLORS))
def test_every_figure_text_meets_wcag_aa_on_both_themes(mode):
    background = PAGE_COLORS[mode]["background"]
    for name, fig in _figures().items():
        shown = for_page_theme(go.Figure(fig), mode)
        weak = {
            where: round(contrast(colour, background), 2)
            for where, colour in text_colours(shown).items()
            if contrast(colour, background) < WCAG_AA
        }
        assert not weak, f"{name} on the {mode} page: {weak}"


def test_exported_figures_meet_wcag_aa_on_white():
    for name, fig in _figures().items():
        weak = {w: c for w, c in text_colours(fig).items() if contrast(c, "#FFFFFF") < WCAG_AA}
        assert not weak, f"{name} exported on white: {weak}"


def test_position_axes_say_they_count_from_0():
    """Layers and heads count from 1 in every label; positions from 0 (PE(pos) at pos = 0): the axes say so."""
    from explorer.figures.positional import pe_heatmap

    titles = [
        path_length_figure(0, 5, 8).layout.xaxis6.title.text,
        pe_heatmap(np.zeros((4, 8))).layout.yaxis.title.text,
    ]
    assert titles == ["position (from 0)"] * 2
