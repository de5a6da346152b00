"""Attribution of one output token beside every kind of attention, and how well each kind agrees
(explorer/explain/attribution.py, explorer/explain/agreement.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from explorer.explain.agreement import Agreement
from explorer.explain.attribution import IG_STEPS
from explorer.figures.explain import attribution_bars, layer_head_heatmaps
from explorer.inference import Translation
from explorer.text.pieces import shown_pieces
from ui.explain.compute import attribution_for
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.model_picker import Selection
from ui.urlstate import bound_select_slider

STEPS = (8, 16, 32, 64)


def _grid(rows: list[Agreement], kind: str, method: str, layers: int, heads: int) -> np.ndarray:
    """(layers, heads + 1) of ρ for one kind and method; the last column the layer's mean over heads."""
    grid = np.full((layers, heads + 1), np.nan)
    for r in rows:
        if r.kind == kind and r.method == method and r.layer is not None:
            grid[r.layer, heads if r.head is None else r.head] = r.rho
    return grid


def _kind_label(r: Agreement) -> str:
    names = {"raw": t("raw cross-attention"), "value_weighted": t("value-weighted"), "rollout": t("rollout")}
    return names[r.kind]


def attribution_section(side: Any, selection: Selection, translation: Translation) -> None:
    """A picker of the output token, its attribution with the completeness check, the bars of attribution and
    attention over the source, the ρ heatmaps and the table of every kind's ρ."""
    outputs = shown_pieces(translation.target_output_pieces)
    if st.session_state.get("x_token", 0) >= len(outputs):  # another sentence with fewer output tokens
        st.session_state["x_token"] = 0
    with side:
        position = st.selectbox(
            t("Output token"),
            range(len(outputs)),
            key="x_token",
            format_func=lambda i: f"{i + 1}: {outputs[i]}",
            help=t("The token of the translation whose log-probability is attributed to the source."),
        )
        n_steps = int(bound_select_slider(st, t("Integration steps"), STEPS, "x_steps", IG_STEPS))
    position = min(int(position or 0), len(outputs) - 1)
    with st.spinner(
        t("Attributing “{token}” with integrated gradients ({n} steps)…", token=outputs[position], n=n_steps)
    ):
        report = attribution_for(selection, translation, position, n_steps)
    found = report.attributions[0]
    lang = current_language()
    # One line, not four metrics: the bars below must start on the first screen at 1280x720.
    st.markdown(
        t(
            "log p = {log_prob:.3f} · delta = F(x) − F(0) = {delta:.3f} · Σ integrated gradients = {total:.3f} · "
            "{n} steps",
            log_prob=found.log_prob,
            delta=found.delta,
            total=float(found.integrated_gradients.sum()),
            n=found.n_steps,
        )
    )
    st.caption(
        t(
            "Completeness: integrated gradients must sum to delta, the log-probability with the words minus that "
            "with every source embedding set to zero (the positions kept). With {n} steps they miss it by "
            "{error:+.3f}.",
            n=found.n_steps,
            error=found.completeness_error,
        )
    )
    raw, weighted = report.explained.raw.cross, report.explained.weighted("cross")
    series = {
        t("integrated gradients"): found.integrated_gradients,
        t("gradient × input"): found.gradient_x_input,
        t("rollout"): report.rollout[position],
        t("raw cross-attention, last layer"): raw[-1, :, position].mean(0),
        t("value-weighted, last layer"): weighted[-1, :, position].mean(0),
    }
    source = shown_pieces(translation.source_pieces)
    title = t("What “{token}” owes to each source piece", token=outputs[position])
    show_figure(attribution_bars(source, series, title=title, lang=lang), "attribution", key="explain_bars")
    rows = report.agreement[0]
    layers, heads = raw.shape[0], raw.shape[1]
    method = "integrated_gradients"
    rollout_rho = next(r.rho for r in rows if r.kind == "rollout" and r.method == method)
    grids = {
        t("raw cross-attention"): _grid(list(rows), "raw", method, layers, heads),
        t("value-weighted"): _grid(list(rows), "value_weighted", method, layers, heads),
    }
    heat_title = t("Spearman ρ with |integrated gradients| · rollout ρ = {rho:.2f}", rho=rollout_rho)
    figure = layer_head_heatmaps(grids, title=heat_title, value_name="ρ", value_range=(-1.0, 1.0), lang=lang)
    show_figure(figure, "agreement", key="explain_agreement")
    pairs = zip(
        [r for r in rows if r.method == method], [r for r in rows if r.method == "gradient_x_input"], strict=True
    )
    # The best agreement first; a ρ without a value (a constant row) last.
    ordered = sorted(pairs, key=lambda pair: -np.nan_to_num(pair[0].rho, nan=-2.0))
    table = [
        {
            t("attention"): _kind_label(r),
            t("Layer"): t("all") if r.layer is None else str(r.layer + 1),
            t("Head"): (t("all") if r.layer is None else t("mean")) if r.head is None else str(r.head + 1),
            t("ρ with integrated gradients"): round(r.rho, 3),
            t("ρ with gradient × input"): round(g.rho, 3),
        }
        for r, g in ordered
    ]
    st.dataframe(table, hide_index=True, key="explain_agreement_table")
    st.caption(
        t(
            "Spearman's ρ between |attribution| and attention over the source pieces of this one token: 1 when "
            "they order the pieces alike, 0 when unrelated. High for one sentence is not high for every sentence."
        )
    )
