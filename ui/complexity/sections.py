"""The Complexity page's sections: the paper's argument, the four sizes in the sidebar, Table 1 as formulas and
as a figure, the layers timed on this machine, and the path between two positions.

Figures go through `show_figure` like every page's: their text in the page theme's body colour (Streamlit's
plotly theme draws it in a grey under 4.5:1 on white) and PNG/SVG downloads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer.complexity.measure import rows_to_csv, sequence_lengths
from explorer.complexity.table1 import crossover_n, table1_rows
from explorer.figures.complexity import measured_figure, metric_labels, n_grid, operations_figure, path_length_figure
from ui.complexity.measuring import measure_with_bar
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import controls, fit_height, page_header
from ui.urlstate import bound_slider

MEASUREMENT_KEY = "complexity_measurement"  # (ns, d, kernel, device) of the last "Measure" click, or None


@dataclass(frozen=True)
class Sizes:
    """The sizes Table 1 is evaluated at: sequence length, width, kernel, neighbourhood."""

    n: int
    d: int
    k: int
    r: int


def intro() -> None:
    page_header(
        t("Complexity: self-attention vs recurrent vs convolutional"),
        t(
            "Section 4 of the paper (*Why Self-Attention*) compares layers that map a sequence of **n** vectors of "
            "size **d** to another by three criteria, summarised in **Table 1**: the computation per layer, the "
            "number of operations that must run one after another, and the longest path a signal travels between "
            "two positions. Self-attention costs O(n²·d) against O(n·d²) for a recurrent layer, so it is cheaper "
            "whenever n < d (true for sentences with d = 512), runs all positions at once, and joins any two "
            "positions in one step. Convolutions with kernel k cost O(k·n·d²) and need a stack of layers to connect "
            "distant positions; restricting self-attention to a neighbourhood of r positions costs O(r·n·d) but "
            "lengthens the path to O(n/r)."
        ),
    )


def sizes_section() -> Sizes:
    """The four sizes in the page's controls, each kept in the URL."""
    side = controls()
    return Sizes(
        n=bound_slider(side, t("Sequence length n"), "complexity_n", 2, 4096, 128),
        d=bound_slider(side, t("Representation dimension d"), "complexity_d", 16, 2048, 512, step=16),
        k=bound_slider(side, t("Kernel size k (convolution)"), "complexity_k", 2, 9, 3),
        r=bound_slider(side, t("Neighbourhood r (restricted self-attention)"), "complexity_r", 1, 256, 16),
    )


def table1_section(sizes: Sizes) -> None:
    """The operations of every layer type against n, then Table 1 evaluated at the chosen sizes."""
    n, d, k, r = sizes.n, sizes.d, sizes.k, sizes.r
    # Only the title and the page's tabs sit above this figure, so it may take most of the first screen: at 440 px
    # its seven-row legend left the curves a strip 90 px high in a 1024 px window; at 600 px it ran 40 px past a
    # 720 px projector's screen once the tabs were above it.
    show_figure(
        fit_height(operations_figure(n_grid(n, d), d, k, r, highlight_n=n, lang=current_language()), 540, width=900),
        "Table 1 operations",
        key="complexity_operations",
    )
    st.subheader(t("Table 1"))
    st.dataframe(
        [{**row, "Layer type": t(row["Layer type"])} for row in table1_rows(n, d, k, r)],
        hide_index=True,
        width="stretch",
        column_config={
            "Layer type": st.column_config.TextColumn(t("Layer type")),
            "Complexity per layer": st.column_config.TextColumn(t("Complexity per layer")),
            "Operations": st.column_config.NumberColumn(t("Operations"), format="localized"),
            "Sequential operations": st.column_config.TextColumn(t("Sequential operations")),
            "Sequential steps": st.column_config.NumberColumn(t("Sequential steps")),
            "Maximum path length": st.column_config.TextColumn(t("Maximum path length")),
            "Path length (layers)": st.column_config.NumberColumn(t("Path length (layers)")),
        },
    )
    st.caption(
        t(
            "Operations are the formulas evaluated at n = {n}, d = {d}, k = {k}, r = {r} with constants dropped. "
            "Self-attention and recurrence cost the same at n = d = {crossover:.0f}. Path length: layers (recurrent: "
            "steps) between the first and the last position; the convolutional row uses dilated convolutions.",
            n=n,
            d=d,
            k=k,
            r=r,
            crossover=crossover_n(d),
        )
    )


@st.cache_data(show_spinner=False, max_entries=16)
def measured_rows(ns: tuple[int, ...], d: int, kernel: int, device: str) -> list[dict[str, Any]]:
    """Measurements per (ns, d, kernel, device); the progress bar is replayed finished on a cache hit."""
    return measure_with_bar(ns, d, kernel=kernel, device=device)


def measured_section(kernel: int) -> None:
    """The layers timed on this machine at a width of its own, on request, with the numbers as a CSV file."""
    st.session_state.setdefault(MEASUREMENT_KEY, None)
    st.subheader(t("Measured on this machine"))
    device = str(st.session_state.get("device", "cpu"))
    st.markdown(
        t(
            "Time and memory of one self-attention layer, one LSTM layer, one convolution and a stack of "
            "log_k(n) dilated convolutions, at equal d, on **{device}**. The LSTM's n steps run one after "
            "another, so its time grows with n even though each step is a small d×d product.",
            device=device,
        )
    )
    left, right = st.columns(2)
    measure_d = left.select_slider(
        t("Width d for the measurement"), options=(32, 64, 128, 256, 512), value=128, key="complexity_measure_d"
    )
    n_max = right.select_slider(t("Largest n"), options=(64, 128, 256, 512, 1024), value=512, key="complexity_n_max")
    if st.button(t("Measure on this machine"), type="primary"):
        st.session_state[MEASUREMENT_KEY] = (sequence_lengths(n_max), measure_d, kernel, device)
    request = st.session_state[MEASUREMENT_KEY]
    if request is None:
        return
    rows = measured_rows(*request)
    metrics = metric_labels(current_language())
    metric = st.radio(t("Show"), options=tuple(metrics), format_func=metrics.__getitem__, horizontal=True)
    assert metric is not None, "a radio with options and no index=None always has a value"
    show_figure(
        measured_figure(rows, metric, lang=current_language()), f"Table 1 measured {metric}", key="complexity_measured"
    )
    _, measured_d, measured_kernel, measured_device = request
    st.download_button(
        t("Download measurements (CSV)"),
        data=rows_to_csv(rows),
        mime="text/csv",
        file_name=f"table1_measured_{measured_device}_d{measured_d}_k{measured_kernel}.csv",
    )


@st.fragment
def path_length_section(n: int, k: int, r: int) -> None:
    """How many layers (recurrent: steps) a signal crosses between two chosen positions."""
    st.subheader(t("Maximum path length"))
    st.markdown(t("Pick two positions: how many layers (recurrent: time steps) does a signal cross between them?"))
    left, right = st.columns(2)
    i = left.slider(t("Position i"), min_value=0, max_value=n - 1, value=0)
    j = right.slider(t("Position j"), min_value=0, max_value=n - 1, value=n - 1)
    show_figure(
        path_length_figure(i, j, n, k, r, lang=current_language()), "Table 1 path length", key="complexity_path_length"
    )
