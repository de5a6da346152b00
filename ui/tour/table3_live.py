"""Stop 9's rows on this machine: Table 3's rows (A), (B), (D) and (E), each a tiny pair scored beside the
paper's row. The stored results (explorer/tour/data/) show at once; a visitor may train the pair again in the
background, and the page finds that pair again after a reload and scores it when both runs end."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from explorer.figures import tour_rows
from explorer.tour import table3_rows
from explorer.tour.table3_rows import RowResult
from explorer.tour.variants import ROWS, newest_pair, start_row, variant_curves
from explorer.training.run_folder import JobError
from ui.figures import show_figure
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.tour.paper_live import row_a_attention_view
from ui.train.runs import manager, session_owner
from ui.urlstate import bound_choice

ROW_KEY = "tour_table3_row"
LIVE_STATUSES = ("preparing", "running", "stopping")

# What each row changes, and what the paper found (message ids).
ROW_TEXTS = {
    "A": "Row (A): 8 heads against one head with d_k = d_model, the same parameters and cost, on the reverse "
    "task. The paper: h = 1 is 0.9 BLEU below h = 8.",
    "B": "Row (B): d_k = 16 against d_k = 4 at h = 4 (d_v stays 16, as the paper keeps d_v = 64), on the "
    "reverse task. The paper's d_k = 16 (a quarter of 64) costs 0.24 perplexity and 0.7 BLEU: \u201creducing "
    "the attention key size d_k hurts model quality\u201d, so \u201cdetermining compatibility is not easy\u201d "
    "(Section 6.2).",
    "D": "Row (D): label smoothing \u03b5_ls = 0.1 against none, on the sort task with little data. The paper: "
    "without smoothing, perplexity is better (4.67 against 4.92) and BLEU worse (25.3 against 25.8); smoothing "
    "\u201churts perplexity, as the model learns to be more unsure, but improves accuracy and BLEU score\u201d "
    "(Section 5.4).",
    "E": "Row (E): learned positions against sinusoids on the copy task, both trained on sequences of {low} to "
    "{high} symbols and tested on up to {longest}. The paper: \u201cnearly identical results\u201d (BLEU 25.7 "
    "against 25.8); it kept the sinusoids because they \u201cmay allow the model to extrapolate to sequence "
    "lengths longer than the ones encountered during training\u201d (Section 3.5).",
}


@st.cache_resource
def stored_row(letter: str) -> RowResult | None:
    return table3_rows.load(letter)


@st.cache_resource(max_entries=8)
def scored_pair(letter: str, names: tuple[str, ...]) -> RowResult | None:
    """A finished background pair's scores, computed once per pair for every session of this server."""
    return table3_rows.score_runs(manager(), letter, names)


def finished_pair(letter: str) -> RowResult | None:
    """The newest background pair of row `letter`, scored, or None while it trains (or never ran)."""
    names = tuple(newest_pair(manager(), letter))
    if not names:
        return None
    curves = variant_curves(manager(), letter, list(names))
    if len(curves) != len(names) or any(c.status != "finished" for c in curves):
        return None
    return scored_pair(letter, names)


def _number(value: float | None, digits: int) -> str:
    return "\u2014" if value is None else f"{value:.{digits}f}"


def comparison_table(letter: str, results: Sequence[tuple[str, RowResult]], scores: bool) -> None:
    """The paper's base and changed row beside each of our results (stored, and trained now where there is one).
    The paper's changed row stays "?" until the stop's guess is checked (its numbers answer it)."""
    paper = table3_rows.paper_rows(letter)
    rows = [
        {
            "": t("paper"),
            t("model"): r.group,  # "base" or "(E)": the row's change is in the caption above
            "PPL": _number(r.ppl, 2) if scores or r.group == "base" else "?",
            "BLEU": _number(r.bleu, 1) if scores or r.group == "base" else "?",
            t("exact"): "\u2014",
        }
        for r in paper
    ]
    for source, result in results:
        rows += [
            {
                "": source,
                t("model"): v.label,
                "PPL": _number(v.perplexity, 3),
                "BLEU": _number(v.bleu, 1),
                t("exact"): f"{v.exact:.0%}",
            }
            for v in result.variants
        ]
    st.dataframe(rows, hide_index=True)


def rows_section(lang: str, scores: bool) -> None:
    """Pick a row; its stored result (and a finished run of this server's) beside the paper's, then the row's
    background runs."""
    st.markdown(t("**Table 3 on this machine**"))
    picked = bound_choice(  # ?tour_table3_row=E: a lecturer's link opens the row
        st.segmented_control, t("Row"), list(ROWS), ROW_KEY, "A", required=True, format_func=lambda r: f"({r})"
    )
    letter = picked or "A"
    row = ROWS[letter]
    st.caption(t(ROW_TEXTS[letter], low=row.min_len, high=row.max_len, longest=table3_rows.LONGEST_TESTED))
    stored, live = stored_row(letter), finished_pair(letter)
    results = [(t("stored"), r) for r in (stored,) if r is not None]
    results += [(t("trained here"), r) for r in (live,) if r is not None]
    comparison_table(letter, results, scores)
    if stored is not None:
        st.caption(
            t(
                "Stored: {steps} steps per model on a CPU, made by `{command}`. PPL is the validation perplexity "
                "(no smoothing), BLEU greedy on the {n} validation sequences, exact the share of them reproduced "
                "without a mistake.",
                steps=stored.variants[0].steps,
                command=table3_rows.command(letter),
                n=row.n_val,
            )
        )
    else:
        st.caption(t("No stored result for this row: `{command}` makes it.", command=table3_rows.command(letter)))
    if letter == "E":
        for source, result in results:
            show_figure(
                tour_rows.length_figure(
                    {v.label: v.by_length for v in result.variants}, result.train_lengths[1], lang=lang
                ),
                t("Row (E) by length"),
                key=f"tour_row_e_lengths_{'live' if result is live else 'stored'}",
                downloads=False,
            )
            st.caption(
                t(
                    "{source}: exact share of {n} fresh sequences per length. The learned model's table is on the "
                    "Positional encoding page.",
                    source=source[:1].upper() + source[1:],
                    n=table3_rows.PER_LENGTH,
                )
            )
    if letter == "A":
        row_a_attention_view(lang)
    background_runs(letter, lang)


def background_runs(letter: str, lang: str) -> None:
    """Start row `letter`'s pair in the background and draw their curves; the page never waits for them."""
    names = newest_pair(manager(), letter)
    if st.button(
        t("Train row ({row}) here", row=letter),
        key=f"tour_start_row_{letter.lower()}",
        icon=":material/play_arrow:",
        help=t(
            "Trains both models of the row, each in its own process, {steps} steps each: a few minutes.",
            steps=ROWS[letter].steps,
        ),
    ):
        try:
            start_row(manager(), letter, owner=session_owner())
        except JobError as error:
            st.warning(t("Not started: {error}", error=shown_value(error, ERROR_CHARS)), icon=":material/hourglass:")
            return
        st.rerun()
    if not names:
        return
    live = any(c.status in LIVE_STATUSES for c in variant_curves(manager(), letter, names))

    # Redraws itself every two seconds while the runs train; one full rerun when they end stops the polling
    # and scores the pair.
    @st.fragment(run_every=2.0 if live else None)
    def curves_view() -> None:
        curves = variant_curves(manager(), letter, names)
        show_figure(
            tour_rows.variant_figure(curves, letter, lang=lang),
            t("Row ({row}) on this machine", row=letter),
            key=f"tour_variants_chart_{letter.lower()}",
            downloads=False,
        )
        st.caption(
            t(
                "{parameters} parameters against {other}; the runs are also on the Train page.",
                parameters=f"{curves[0].parameters:,}" if curves else "?",
                other=f"{curves[-1].parameters:,}" if curves else "?",
            )
        )
        if live and not any(c.status in LIVE_STATUSES for c in curves):
            st.rerun()

    curves_view()
