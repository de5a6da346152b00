"""Which heads matter: the importance table of a checkpoint (shipped or cached; never computed during a
request), as heatmaps, a pruning curve and a CSV, or a background run with a progress bar when there is none."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from explorer.analysis.importance import ImportanceRun, ImportanceSettings, ImportanceTable, find_table, total_steps
from explorer.config import ModelConfig
from explorer.figures.heads import importance_heatmaps, pruning_curves
from explorer.paper import HEAD_FAMILIES
from ui.figures import show_figure
from ui.heads.numbering import numbering_note
from ui.i18n import current_language, t
from ui.markdown import ERROR_CHARS, shown_value

COLUMNS = {"bleu_drop": "BLEU drop", "gradient_normalised": "Gradient importance"}


@st.cache_resource(max_entries=4)
def importance_run(path: str, version: float, settings: ImportanceSettings) -> ImportanceRun:
    """One background run per checkpoint version and settings, shared by every session."""
    return ImportanceRun(path, settings)


@st.cache_data(max_entries=8, show_spinner=False)
def ready_table(path: str, version: float) -> dict[str, Any] | None:
    """The shipped or cached table as a dict (hashing the files costs a moment: once per version)."""
    table = find_table(path)
    return table.to_dict() if table is not None else None


def show_table(table: ImportanceTable, config: ModelConfig) -> None:
    lang = current_language()
    s = table.settings
    st.caption(
        t(
            "BLEU of the full model: {bleu:.2f} on {n} validation sentences, {search} (sacreBLEU {signature})",
            bleu=table.baseline_bleu,
            n=s.sentences,
            signature=table.bleu_signature,
            search=t("greedy decoding") if s.beam_size == 1 else t("beam {k}", k=s.beam_size),
        )
    )
    column = st.segmented_control(
        t("Colour by"),
        tuple(COLUMNS),
        key="hi_column",
        required=True,
        default="bleu_drop",
        format_func=lambda c: t(COLUMNS[c]),
    )
    grids = {f: np.array(table.grid(f, config, column)) for f in HEAD_FAMILIES}
    show_figure(
        importance_heatmaps(grids, value_title=t(COLUMNS[column]), lang=lang), "head importance", key="heads_importance"
    )
    top = table.ranked()[:5]
    st.markdown(
        t(
            "Most important heads (largest BLEU drop when removed alone): {heads}.",
            heads=", ".join(f"`{h.name}` ({h.bleu_drop:+.2f})" for h in top),
        )
    )
    if table.pruning:
        curves = {f: [(p.removed, p.bleu) for p in steps] for f, steps in table.pruning.items()}
        show_figure(pruning_curves(curves, table.baseline_bleu, lang=lang), "head pruning", key="heads_pruning")
    rows = [
        {
            t("head"): h.name,
            t("BLEU without it"): round(h.bleu, 2),
            t("BLEU drop"): round(h.bleu_drop, 2),
            t("Gradient importance"): round(h.gradient_normalised, 4),
        }
        for h in table.heads
    ]
    st.dataframe(rows, hide_index=True, key="heads_importance_table")
    st.caption(numbering_note(config))
    st.download_button(
        t("Table as CSV"),
        table.to_csv(),
        file_name="head_importance.csv",
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
    )


def importance_section(path: str, version: float, config: ModelConfig) -> None:
    st.markdown(
        t(
            "Switch each head off alone and measure BLEU on validation sentences: the drop says how much the "
            "translation needs that head. The second score is the gradient importance of Michel et al. (2019): "
            "how fast the loss grows as the head is faded out, normalised within each layer. The pruning curve "
            "removes heads of one family in order of that score, least important first."
        )
    )
    data = ready_table(path, version)
    if data is not None:
        show_table(ImportanceTable.from_dict(data), config)
        return
    settings = ImportanceSettings()
    run = importance_run(path, version, settings)
    if run.table is not None:
        ready_table.clear()
        show_table(run.table, config)
        return
    steps = total_steps(config)
    st.info(
        t(
            "No importance table for this checkpoint yet. Computing one decodes {n} validation sentences "
            "{steps} times; it runs in the background and is kept on disk for this checkpoint.",
            n=settings.sentences,
            steps=steps,
        ),
        icon=":material/hourglass_empty:",
    )
    if not run.running and run.error is None:

        def start() -> None:  # a button's callback returns nothing; start() returns the run
            run.start()

        st.button(
            t("Compute in the background"),
            key="heads_importance_start",
            on_click=start,
            icon=":material/play_arrow:",
        )
    if run.running:  # polled only while a run goes: an idle page reran this fragment every 3 s for nothing
        _progress(run)
    elif run.error is not None:
        st.error(t("The importance run failed: {error}", error=shown_value(run.error, ERROR_CHARS)))


@st.fragment(run_every=3.0)
def _progress(run: ImportanceRun) -> None:
    if run.error is not None:
        st.error(t("The importance run failed: {error}", error=shown_value(run.error, ERROR_CHARS)))
    elif run.running:
        done, total, what = run.progress
        st.progress(done / max(total, 1), text=t("{done} of {total}: {what}", done=done, total=total, what=what))
    elif run.table is not None:
        st.rerun()
