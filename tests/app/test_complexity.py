"""The Complexity page: Table 1 for the chosen n, d, k and r, a measurement, and the path-length fragment."""

from __future__ import annotations

import json
from pathlib import Path

from explorer.complexity import measure
from explorer.complexity.measure import MEASURED_LAYERS
from explorer.figures.export import find_browser

PAGE = Path(__file__).resolve().parents[2] / "pages" / "complexity.py"


def open_part(at, part: str | None) -> None:
    """Open the page's tab `part` (None: the first, Table 1) as a link or the tab's click does: by the URL."""
    if part is None:
        at.query_params.pop("complexity_part", None)
    else:
        at.query_params["complexity_part"] = part
    at.run()
    assert not at.exception, [e.message for e in at.exception]


def test_page_shows_table1_for_chosen_values_and_measures():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["device"] = "cpu"
    at.run()
    assert not at.exception
    at.slider(key="complexity_n").set_value(100)
    at.slider(key="complexity_d").set_value(512)
    at.slider(key="complexity_k").set_value(3)
    at.slider(key="complexity_r").set_value(10)
    at.run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["Complexity per layer"]) == ["O(n²·d)", "O(n·d²)", "O(k·n·d²)", "O(r·n·d)"]
    assert list(table["Operations"]) == [5_120_000, 26_214_400, 78_643_200, 512_000]
    assert list(table["Sequential steps"]) == [1, 100, 1, 1]
    assert list(table["Path length (layers)"]) == [1, 99, 5, 10]
    charts = at.get("plotly_chart")
    assert [chart.key for chart in charts] == ["complexity_operations"]  # the other tabs are drawn when opened
    assert "d = 512, k = 3, r = 10" in json.loads(charts[0].proto.spec)["layout"]["title"]["text"]

    open_part(at, "measured")
    assert not at.dataframe and not at.get("plotly_chart"), "nothing measured yet, and Table 1 is another tab"
    at.select_slider(key="complexity_measure_d").set_value(32)
    at.select_slider(key="complexity_n_max").set_value(64)
    at.button[0].click()
    at.run()
    assert not at.exception
    [chart] = at.get("plotly_chart")
    measured = json.loads(chart.proto.spec)
    assert [trace["name"] for trace in measured["data"] if trace["mode"] == "lines+markers"] == [
        measure.MEASURED_LABELS[layer] for layer in MEASURED_LAYERS
    ]
    assert "Measured on cpu" in measured["layout"]["title"]["text"]
    labels = [button.proto.label for button in at.get("download_button")]
    assert labels.count("Download measurements (CSV)") == 1
    if find_browser() is not None:  # the SVG files are drawn by a local Chromium (CI installs it)
        assert labels.count("SVG") == 1  # the figure's files

    # Positions i and j, in the path-length tab's fragment (by label: the sidebar's sliders come after the page's).
    open_part(at, "path")
    positions = {slider.label: slider for slider in at.slider if slider.label.startswith("Position")}
    positions["Position j"].set_value(7)
    positions["Position i"].set_value(1)
    at.run()
    assert not at.exception
    [chart] = at.get("plotly_chart")
    path = json.loads(chart.proto.spec)
    assert path["data"][0]["x"] == [1, 6, 3, 2, 1]  # k = 3, r = 10: |7 - 1| = 6

    open_part(at, "measured")  # the measurement is kept: replayed from the cache, not run again
    assert [chart.key for chart in at.get("plotly_chart")] == ["complexity_measured"]
    open_part(at, None)
    assert at.query_params.get("complexity_part") is None and at.dataframe


def test_the_pages_figures_draw_their_text_in_the_themes_body_colour():
    """Streamlit's own plotly theme draws axis text in #808495, 3.8:1 on white: weak on a projector. The page's
    figures go through `show_figure`, which sets every text to the page theme's body colour."""
    from streamlit.testing.v1 import AppTest

    from explorer.figures.theme import PAGE_COLORS
    from tests.engine.test_figure_legibility import WCAG_AA, contrast

    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["device"] = "cpu"
    at.run()
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    open_part(at, "path")
    specs += [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    assert len(specs) == 2
    light = PAGE_COLORS["light"]
    for spec in specs:
        layout = spec["layout"]
        axes = [value for key, value in layout.items() if key.startswith(("xaxis", "yaxis"))]
        colours = [layout["font"].get("color")] + [axis["tickfont"].get("color") for axis in axes]
        assert all(c == light["text"] for c in colours), colours
        assert contrast(light["text"], light["background"]) >= WCAG_AA
