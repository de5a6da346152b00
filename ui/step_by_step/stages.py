"""The stages of Eq. 1 for the followed query, one section each: the projections, scores to weights, the
weighted sum of the values, the heads concatenated and projected by W^O, and the check against the model."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.analysis.step_by_step import stage_rows
from explorer.figures.matrix_table import MATRIX_STYLE, matrix_table
from explorer.figures.step_by_step import query_row_figure, stage_matrices, values_heatmap
from explorer.figures.theme import FONT_SIZE, escape_labels, wrap_words
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import section_header
from ui.part_tabs import PARTS
from ui.presenter import font_scale
from ui.step_by_step.choice import Followed
from ui.step_by_step.tables import full_height

SHOWN_DIMS = 8  # long vectors are cut to their first dimensions, with a note


def cut(width: int) -> str:
    """The note under a figure title that a vector was cut to its first dimensions: a second, smaller line, so
    the title fits a 1024 px window."""
    if width <= SHOWN_DIMS:
        return ""
    note = t("(first {shown} of {width} dimensions)", shown=SHOWN_DIMS, width=width)
    return f'<br><span style="font-size:{FONT_SIZE}px">{note}</span>'


def projections_section(followed: Followed) -> None:
    """1 · the query vector, and the keys and values of every position it may look at."""
    steps = followed.steps
    d_k, d_v = steps.d_k, steps.values.shape[1]
    dims = slice(0, SHOWN_DIMS)
    st.header(t("1 · Project to query, keys and values"))
    st.html(MATRIX_STYLE)
    _matrix("sbs_q", steps.q[None, dims], [steps.query_piece], f"q = x W<sup>Q</sup>{cut(d_k)}")
    st.markdown(
        t(
            "Each head has its own $W^Q_i, W^K_i, W^V_i$ ($d_{{model}}$ = {d_model} → $d_k$ = {d_k}). The query "
            "comes from position {query}; keys and values from every position it may look at.",
            d_model=followed.d_model,
            d_k=d_k,
            query=followed.query,
        )
    )
    # K and V one under the other: side by side at 1024 px their cells are too narrow for the numbers.
    _matrix("sbs_k", steps.keys[:, dims], steps.key_pieces, f"K = X W<sup>K</sup>{cut(d_k)}")
    _matrix("sbs_v", steps.values[:, dims], steps.key_pieces, f"V = X W<sup>V</sup>{cut(d_v)}")


def _matrix(key: str, values: np.ndarray, rows: list[str], title: str) -> None:
    """values (rows, dims) as a table of coloured numbers in a container keyed `key`: a table, not a plotly heat
    map, since three more charts held the tab's figures back (explorer/figures/matrix_table.py)."""
    with st.container(key=key):
        st.html(matrix_table(values, rows, title=title, scale=font_scale(), lang=current_language()))


def scores_section(followed: Followed) -> None:
    """2 · q·k, ÷√d_k, the mask and the softmax for the query, then for every query of the head."""
    steps, view, head = followed.steps, followed.view, followed.head
    st.header(t("2 · Scores, scaling, mask, softmax"))
    mask_notes = {
        "encoder_self": t("Only padding is masked (none in a single sentence)."),
        "decoder_self": t(
            "The causal mask hides the {n} later position(s): a position may not look at the future it is predicting.",
            n=steps.n_masked,
        ),
        "cross": t("Only source padding is masked (none in a single sentence)."),
    }
    st.markdown(
        t(
            "$q \\cdot k_j$ for every key, divided by {sqrt_dk} = {value:.3f}; masked keys get −∞, so softmax gives "
            "them weight 0. {note}",
            sqrt_dk=f"$\\sqrt{{d_k}} = \\sqrt{{{steps.d_k}}}$",
            value=np.sqrt(steps.d_k),
            note=mask_notes[followed.family],
        )
    )
    mask_states = {"allowed": t("allowed"), "masked (−∞)": t("masked (−∞)")}
    st.dataframe(
        [{**row, "mask": mask_states.get(row["mask"], row["mask"])} for row in stage_rows(steps)],
        hide_index=True,
        width="stretch",
        key="sbs_stage_table",
        height=full_height(len(steps.key_pieces)),  # every key's row: the table is read to its last key
        column_config={
            "key": st.column_config.TextColumn(t("key")),
            "mask": st.column_config.TextColumn(t("mask")),
            "q·k": st.column_config.NumberColumn(format="%.4f"),
            "÷ √d_k": st.column_config.NumberColumn(format="%.4f"),
            "softmax": st.column_config.NumberColumn(t("softmax"), format="%.4f"),
        },
    )
    show_figure(
        query_row_figure(
            steps.scaled,
            steps.allowed,
            steps.weights,
            steps.key_pieces,
            title=wrap_words(t("Query “{token}”: scores → weights", token=escape_labels([steps.query_piece])[0])),
            lang=current_language(),
        ),
        "Step by step scores to weights",
        key="sbs_row",
    )
    # Drawn only once opened (a rerun): the largest figure of the page, closed on the first screen, kept the
    # figures above it waiting while the browser laid it out.
    whole_head = st.expander(
        t("The whole head: every query at every stage"), expanded=False, key="sbs_whole_head", on_change="rerun"
    )
    if not whole_head.open:
        return
    with whole_head:
        show_figure(
            stage_matrices(
                view.scores[head - 1],
                view.scaled_scores[head - 1],
                view.masked_scores[head - 1],
                view.weights[head - 1],
                view.query_pieces,
                view.key_pieces,
                followed.query,
                title=wrap_words(followed.where) + "<br>Q·Kᵀ → ÷√d_k → mask → softmax",
                lang=current_language(),
            ),
            "Step by step stages",
            key="sbs_stages",
        )


def weighted_sum_section(followed: Followed) -> None:
    """3 · each visible value row scaled by its weight, and their sum: the head's output."""
    steps, head = followed.steps, followed.head
    st.header(t("3 · Weighted sum of the values"))
    hidden = steps.n_masked
    st.markdown(
        t("head {head} output $= \\sum_j w_j v_j$: each value row scaled by its weight, then summed.", head=head)
        + (" " + t("The {n} masked keys have weight 0 and are left out.", n=hidden) if hidden else "")
    )
    visible, rows = steps.weighted_terms(SHOWN_DIMS)
    labels = [f"{steps.weights[j]:.2f} × v({steps.key_pieces[j]})" for j in visible]
    show_figure(
        values_heatmap(
            rows,
            [*labels, "Σ = " + t("head {head}", head=head)],
            title=wrap_words(t("w<sub>j</sub> · v<sub>j</sub> and their sum")) + cut(steps.values.shape[1]),
            decimals=3,
            lang=current_language(),
        ),
        "Step by step weighted values",
        key="sbs_weighted",
    )
    if followed.value_weighted is not None:
        _value_weighted_row(followed)


def _value_weighted_row(followed: Followed) -> None:
    """The followed query's weights beside its value-weighted shares (the page's switch on "value-weighted"):
    what the head looks at against what it moves, ‖w_j · f(v_j)‖ with f(v) = v W^O's slice of this head."""
    assert followed.value_weighted is not None
    steps = followed.steps
    shares = followed.value_weighted[followed.query]
    show_figure(
        values_heatmap(
            np.stack([steps.weights, shares]),
            [t("weight w<sub>j</sub>"), t("value-weighted share")],
            steps.key_pieces,
            title=wrap_words(
                t("Looked at against moved: query “{token}”", token=escape_labels([steps.query_piece])[0])
            ),
            x_title=t("key"),
            bound=1.0,
            lang=current_language(),
        ),
        "Step by step value-weighted",
        key="sbs_value_weighted",
    )
    st.caption(
        t(
            "Value-weighted share: ‖w_j · f(v_j)‖ over the row's total, with f(v) = v times this head's slice of "
            "$W^O$ (Kobayashi et al., 2020). A key with a large weight but a short f(v_j) is looked at yet moves "
            "little into the output."
        )
    )


def heads_section(followed: Followed) -> None:
    """4 · every head's output for the same query, concatenated and projected by W^O."""
    steps, view, head = followed.steps, followed.view, followed.head
    d_v = steps.values.shape[1]
    dims = slice(0, SHOWN_DIMS)
    section_header(
        t("4 · Concatenate the heads, project with $W^O$"),
        t(
            "All {heads} heads run in parallel on the same query; their outputs ($d_v$ = {d_v} each) are "
            "concatenated into one vector of {width} numbers and multiplied by $W^O$ ({width} × {d_model}).",
            heads=view.n_heads,
            d_v=d_v,
            width=view.n_heads * d_v,
            d_model=followed.d_model,
        ),
    )
    head_labels = [
        t("head {head} (above)", head=h + 1) if h == head - 1 else t("head {head}", head=h + 1)
        for h in range(view.n_heads)
    ]
    show_figure(
        values_heatmap(
            steps.all_head_outputs[:, dims],
            head_labels,
            decimals=3,
            title=wrap_words(t("Concat(head<sub>1</sub> … head<sub>{h}</sub>), a row per head", h=view.n_heads))
            + cut(d_v),
            lang=current_language(),
        ),
        "Step by step heads",
        key="sbs_heads",
    )
    show_figure(
        values_heatmap(
            steps.output[None, dims],
            [t("output")],
            title=f"Concat · W<sup>O</sup> + b{cut(followed.d_model)}",
            decimals=3,
            lang=current_language(),
        ),
        "Step by step output",
        key="sbs_output",
    )


def agreement_section(followed: Followed) -> None:
    """The recomputation against the model's own numbers, and the softmax row against its attention map."""
    attention = followed.translation.attention
    assert attention is not None, "the page translates with attention"
    reference = attention.family(followed.family)[followed.layer - 1, followed.head - 1, followed.query]
    st.success(
        t(
            "Recomputed stage by stage in float64 from q, K, V, the numbers match the model's own to {error:.1e}; "
            "the softmax row equals the attention map of the other pages (max difference {difference:.1e}).",
            error=followed.steps.recomputed_error,
            difference=followed.steps.difference_from(reference),
        ),
        icon=":material/check_circle:",
    )


def next_part_note() -> None:
    """Under Eq. 1's first half: where its second half is (a tab, so not drawn until opened)."""
    st.caption(t("Next, the weights times the values: the tab “{tab}” above.", tab=t(PARTS["sbs_part"]["output"])))
