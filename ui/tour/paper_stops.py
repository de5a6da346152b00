"""The stops on the paper's results (6-9): why self-attention (Table 1, with layer timings on this machine),
training (the schedule and label smoothing), beam search beside Table 2, and the model variations of Table 3
with rows (A), (B), (D) and (E) trained on this machine (ui/tour/table3_live.py).
Each view returns the (layer, head) it shows (none here).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.complexity.table1 import table1_rows
from explorer.figures import tour_training
from explorer.paper import TABLE2
from explorer.tour import numbers
from explorer.tour.tables import timed_lengths, trained_steps
from ui.beam.example import beam_sentence
from ui.complexity.measuring import measure_with_bar
from ui.figures import show_figure
from ui.i18n import t
from ui.markdown import md_escape
from ui.tour.context import Shown, TourContext, stop_figure
from ui.tour.paper_live import optimizer_caption, table2_section
from ui.tour.parsing import parsing_section
from ui.tour.state import beam_rows, computed, label_smoothing, revealed
from ui.tour.table3_live import rows_section

# ---- 6 -------------------------------------------------------------------------------------------------


@st.cache_resource
def _timings() -> dict[int, list[dict[str, Any]]]:
    """Layer timings by d, measured on demand and shared by every session of this server."""
    return {}


def why_self_attention_view(ctx: TourContext) -> Shown:
    d, n = ctx.config.d_model, len(ctx.translation.source_ids)
    stop_figure(
        tour_training.operations_figure(n, d, show_crossover=revealed("crossover"), lang=ctx.lang),
        t("Table 1"),
        "why_self_attention",
    )
    rows = table1_rows(n, d)
    st.dataframe(
        [
            {
                t("Layer type"): t(r["Layer type"]),
                t("Complexity per layer"): r["Complexity per layer"],
                t("Operations"): f"{r['Operations']:,}",
                t("Sequential operations"): r["Sequential steps"],
                t("Maximum path length"): r["Path length (layers)"],
            }
            for r in rows
        ],
        hide_index=True,
    )
    timings = _timings()
    measure = d not in timings and st.button(
        t("Measure on this machine"),
        key="tour_measure",
        icon=":material/timer:",
        help=t("Times one layer of each kind at d = {d} for several n (takes a while).", d=d),
    )
    if measure:
        timings[d] = measure_with_bar(timed_lengths(d), d, backward=False, repeats=3)
    if d in timings:
        show_figure(
            tour_training.measured_figure(timings[d], d, lang=ctx.lang),
            t("Measured layer times"),
            key="tour_measured",
            downloads=False,
        )
    return None, None


# ---- 7 -------------------------------------------------------------------------------------------------


def training_view(ctx: TourContext) -> Shown:
    metadata = ctx.checkpoint.metadata
    trained = trained_steps(metadata)
    schedule = numbers.schedule_for(ctx.config, metadata, trained)
    stop_figure(
        tour_training.schedule_figure(
            schedule.steps,
            schedule.rates,
            warmup_steps=schedule.warmup_steps,
            d_model=schedule.d_model,
            scale=schedule.scale,
            trained_steps=trained,
            lang=ctx.lang,
        ),
        t("Learning-rate schedule"),
        "training",
    )
    if not schedule.from_checkpoint:
        st.caption(t("The checkpoint does not record its warm-up; the paper's warmup_steps = 4000 is drawn."))
    epsilon = label_smoothing(ctx.checkpoint)
    if numbers.label_smoothing_of(metadata) is None:
        st.caption(t("The checkpoint does not record its label smoothing; the paper's \u03b5_ls = 0.1 is drawn."))
    position = numbers.middle_position(ctx.translation)
    word = computed(
        "next_word",
        ctx.selection,
        ctx.sentence,
        lambda ck, tr: numbers.next_word(ck.model, ck.tokenizer, tr, position, epsilon),
        position,
        epsilon,
    )
    show_figure(
        tour_training.smoothing_figure(
            word.top_tokens,
            word.top_probs,
            word.word,
            smoothed_target=word.smoothed_target,
            smoothed_other=word.smoothed_other,
            epsilon=epsilon,
            show_model=revealed("confidence"),
            lang=ctx.lang,
        ),
        t("Label smoothing"),
        key="tour_smoothing",
        downloads=False,
    )
    history = numbers.training_history(metadata, ctx.checkpoint.training)
    if "val_bleu" in history:
        st.caption(
            t(
                "This model's training record: validation BLEU {bleu} (greedy) after {steps} steps.",
                bleu=f"{history['val_bleu'][-1]:.1f}",
                steps=trained or "?",
            )
        )
    else:
        st.caption(t("This checkpoint carries no training history."))
    optimizer_caption(ctx)
    return None, None


# ---- 8 -------------------------------------------------------------------------------------------------


def beam_search_view(ctx: TourContext) -> Shown:
    sentence = beam_sentence(ctx.selection)  # the Beam page's: one where the beam has something to show
    rows = beam_rows(ctx.selection, sentence)
    st.markdown(t("This stop uses the Beam page's sentence: \u201c{sentence}\u201d.", sentence=md_escape(sentence)))
    answered = revealed("beam_changes")  # the wider beams' scores and the translations answer the question
    figure = tour_training.beam_figure(rows, greedy_only=not answered, lang=ctx.lang)
    stop_figure(figure, t("Beam search"), "beam_search")
    if answered:
        st.dataframe(
            [
                {t("beam"): r.beam, "\u03b1": r.alpha, t("translation"): r.output, t("score"): round(r.score, 3)}
                for r in rows
                if r.alpha == 0.6
            ],
            hide_index=True,
        )
    bleu = ctx.checkpoint.metadata.get("val_bleu")
    ours = (
        t("this model: {bleu} BLEU on Multi30k validation (greedy)", bleu=f"{bleu[-1]:.1f}")
        if bleu
        else t("this model: no BLEU recorded in its checkpoint")
    )
    paper = "; ".join(f"{r.model}: EN-DE {r.bleu_en_de}, EN-FR {r.bleu_en_fr}" for r in TABLE2[-2:])
    st.caption(
        t(
            "Table 2 (WMT 2014 news, newstest2014) \u2014 {paper}. Beside it, {ours}. Different data and "
            "different test sets: the numbers are not comparable.",
            paper=paper,
            ours=ours,
        )
    )
    table2_section(ctx)
    parsing_section(ctx)
    return None, None


# ---- 9 -------------------------------------------------------------------------------------------------


def variations_view(ctx: TourContext) -> Shown:
    rows = numbers.table3_parameter_rows()
    stop_figure(tour_training.table3_figure(rows, lang=ctx.lang), t("Table 3"), "variations")
    # Every BLEU (and perplexity) but the base model's answers the stop's question: shown after the guess.
    scores = revealed("table3_worst")
    st.dataframe(
        [
            {
                t("row"): r["row"],
                t("change"): r["change"],
                "PPL": f"{r['ppl']:.2f}" if scores or r["row"] == "base" else "?",
                "BLEU": f"{r['bleu']:.1f}" if scores or r["row"] == "base" else "?",
                t("params, paper (M)"): "\u2014" if r["paper_millions"] is None else str(r["paper_millions"]),
                t("params, engine (M)"): round(r["engine_millions"], 1),
            }
            for r in rows
        ],
        hide_index=True,
    )
    if not scores:
        st.caption(t("PPL and BLEU of the changed rows appear once your guess is checked."))
    st.caption(
        t(
            "Engine counts use the paper's 37,000-piece shared vocabulary. Rows (A) keep h\u00b7d_k = "
            "d_model, so their parameter count is the base model's."
        )
    )
    rows_section(ctx.lang, scores)
    return None, None
