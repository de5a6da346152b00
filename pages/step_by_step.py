"""Attention step by step (Section 3.2, Eq. 1): one head, one query, every stage with the loaded model's numbers;
and why the scores are divided by √d_k (Section 3.2.1)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.analysis.step_by_step import (
    InspectedAttention,
    head_steps,
    inspect_translation,
    scaling_example,
    scaling_series,
    scaling_table,
    sqrt_dk_demo,
    stage_rows,
)
from explorer.figures.step_by_step import (
    query_row_figure,
    scaling_figure,
    softmax_comparison,
    stage_matrices,
    values_heatmap,
)
from explorer.figures.theme import FONT_SIZE, escape_labels, wrap_words
from explorer.inference import Translation
from explorer.paper import FAMILY_TITLES
from ui.attention_controls import family_picker, number_picker, sentence_input, show_translation
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import controls, page_header
from ui.markdown import md_escape
from ui.model_cache import cached, require_model, translate_for
from ui.model_picker import Selection
from ui.urlstate import note_link_value, sync_to_url, url_default

SHOWN_DIMS = 8  # long vectors are cut to their first dimensions, with a note
DEMO_D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
QUERY_HELP = {
    "encoder_self": "Queries of encoder self-attention are the source tokens.",
    "decoder_self": "Queries of decoder self-attention are the tokens the decoder reads (<s> y1 …).",
    "cross": "Queries of cross-attention are the decoder positions, named by the token each produces.",
}


def inspected(
    selection: Selection, sentence: str, translation: Translation, family: str, layer: int
) -> InspectedAttention:
    """Every intermediate of one attention module for one translation (cached per model and view)."""
    return cached(
        "inspected",
        selection,
        (sentence, family, layer),
        lambda ck: inspect_translation(ck.model, translation, family, layer),
    )


@st.cache_data(show_spinner=False, max_entries=16)
def demo_rows(n_keys: int, seed: int) -> list:
    return sqrt_dk_demo(DEMO_D_KS, n_keys=n_keys, seed=seed)


def cut(width: int) -> str:
    """The note under a figure title that a vector was cut to its first dimensions: a second, smaller line, so
    the title fits a 1024 px window."""
    if width <= SHOWN_DIMS:
        return ""
    note = t("(first {shown} of {width} dimensions)", shown=SHOWN_DIMS, width=width)
    return f'<br><span style="font-size:{FONT_SIZE}px">{note}</span>'


selection, checkpoint = require_model()
config = checkpoint.config

page_header(
    t("Attention step by step"),
    t(
        "Scaled dot-product attention (Eq. 1) with the loaded model's real numbers: pick a sentence, an attention "
        "module, a head and one query token, and follow that query from its projection to the module's output."
    ),
    formula=(
        r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V \qquad "
        r"\mathrm{MultiHead} = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\,W^O"
    ),
)

side = controls()
with side:
    sentence = sentence_input("sbs_sentence", checkpoint.metadata)
if not sentence:
    st.info(t("Type a sentence to look inside the attention."))
    st.stop()
translation = translate_for(selection, [sentence], beam_size=1, with_attention=True)[0]
show_translation(
    translation, config.max_len, how=t("greedy search; this output is fed back as the decoder input (teacher forcing)")
)

with side:
    family = family_picker("sbs_family", vertical=True)
    n_layers = config.n_encoder_layers if family == "encoder_self" else config.n_decoder_layers
    layer = number_picker("Layer", "sbs_layer", n_layers)
    head = number_picker("Head", "sbs_head", config.n_heads)
view = inspected(selection, sentence, translation, family, layer - 1)
queries = view.query_pieces
positions = list(range(len(queries)))
url_default("sbs_query", min(1, len(queries) - 1), int, allowed=positions)  # hand-kept: labels are tokens
query = side.pills(
    t("Query token"),
    options=positions,
    key="sbs_query",
    required=True,
    format_func=lambda i: f"{i}: {queries[i]}",  # unique labels: pills match by label
    help=t("The position whose attention row is followed through every stage.") + " " + t(QUERY_HELP[family]),
)
sync_to_url("sbs_query")
steps = head_steps(view, head - 1, query)
d_k, d_v = steps.d_k, steps.values.shape[1]
where = t("{family} · layer {layer} · head {head}", family=t(FAMILY_TITLES[family]), layer=layer, head=head)
sources = {
    "encoder_self": "the encoder's own positions",
    "decoder_self": "the decoder's earlier positions (causal mask)",
    "cross": "the encoder output (keys and values), queried from the decoder",
}
st.markdown(
    t(
        "**{where}** · query **{token}** (position {query}) attends over {sources}; $d_k$ = {d_k}, $d_v$ = {d_v}, "
        "$h$ = {h}.",
        where=where,
        token=md_escape(steps.query_piece),
        query=query,
        sources=t(sources[family]),
        d_k=d_k,
        d_v=d_v,
        h=view.n_heads,
    )
)

# ---- 1. projections -------------------------------------------------------------------------------------
st.header(t("1 · Project to query, keys and values"))
dims = slice(0, SHOWN_DIMS)
show_figure(
    values_heatmap(
        steps.q[None, dims], [steps.query_piece], title=f"q = x W<sup>Q</sup>{cut(d_k)}", lang=current_language()
    ),
    "Step by step query",
    key="sbs_q",
)
st.markdown(
    t(
        "Each head has its own $W^Q_i, W^K_i, W^V_i$ ($d_{{model}}$ = {d_model} → $d_k$ = {d_k}). The query comes "
        "from position {query}; keys and values from every position it may look at.",
        d_model=config.d_model,
        d_k=d_k,
        query=query,
    )
)
# K and V one under the other: side by side at 1024 px their cells are too narrow for the numbers.
show_figure(
    values_heatmap(
        steps.keys[:, dims], steps.key_pieces, title=f"K = X W<sup>K</sup>{cut(d_k)}", lang=current_language()
    ),
    "Step by step keys",
    key="sbs_k",
)
show_figure(
    values_heatmap(
        steps.values[:, dims], steps.key_pieces, title=f"V = X W<sup>V</sup>{cut(d_v)}", lang=current_language()
    ),
    "Step by step values",
    key="sbs_v",
)

# ---- 2. scores to weights --------------------------------------------------------------------------------
st.header(t("2 · Scores, scaling, mask, softmax"))
hidden = int((~steps.allowed).sum())
mask_note = {
    "encoder_self": t("Only padding is masked (none in a single sentence)."),
    "decoder_self": t(
        "The causal mask hides the {n} later position(s): a position may not look at the future it is predicting.",
        n=hidden,
    ),
    "cross": t("Only source padding is masked (none in a single sentence)."),
}
st.markdown(
    t(
        "$q \\cdot k_j$ for every key, divided by {sqrt_dk} = {value:.3f}; masked keys get −∞, so softmax gives "
        "them weight 0. {note}",
        sqrt_dk=f"$\\sqrt{{d_k}} = \\sqrt{{{d_k}}}$",
        value=np.sqrt(d_k),
        note=mask_note[family],
    )
)
MASK_STATES = {"allowed": t("allowed"), "masked (−∞)": t("masked (−∞)")}
st.dataframe(
    [{**row, "mask": MASK_STATES.get(row["mask"], row["mask"])} for row in stage_rows(steps)],
    hide_index=True,
    width="stretch",
    key="sbs_stage_table",
    height=min(36 * (len(steps.key_pieces) + 1) + 4, 640),
    column_config={
        "key": st.column_config.TextColumn(t("key")),
        "mask": st.column_config.TextColumn(t("mask")),
        **{name: st.column_config.NumberColumn(format="%.4f") for name in ("q·k", "÷ √d_k", "softmax")},
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
with st.expander(t("The whole head: every query at every stage"), expanded=False):
    show_figure(
        stage_matrices(
            view.scores[head - 1],
            view.scaled_scores[head - 1],
            view.masked_scores[head - 1],
            view.weights[head - 1],
            view.query_pieces,
            view.key_pieces,
            query,
            title=wrap_words(where) + "<br>Q·Kᵀ → ÷√d_k → mask → softmax",
            lang=current_language(),
        ),
        "Step by step stages",
        key="sbs_stages",
    )

# ---- 3. weighted sum -------------------------------------------------------------------------------------
st.header(t("3 · Weighted sum of the values"))
st.markdown(
    t("head {head} output $= \\sum_j w_j v_j$: each value row scaled by its weight, then summed.", head=head)
    + (" " + t("The {n} masked keys have weight 0 and are left out.", n=hidden) if hidden else "")
)
visible = np.flatnonzero(steps.allowed)
rows = np.vstack([steps.weighted_values[visible][:, dims], steps.head_output[None, dims]])
labels = [f"{steps.weights[j]:.2f} × v({steps.key_pieces[j]})" for j in visible] + [
    "Σ = " + t("head {head}", head=head)
]
show_figure(
    values_heatmap(
        rows,
        labels,
        title=wrap_words(t("w<sub>j</sub> · v<sub>j</sub> and their sum")) + cut(d_v),
        decimals=3,
        lang=current_language(),
    ),
    "Step by step weighted values",
    key="sbs_weighted",
)

# ---- 4. concat and W^O -----------------------------------------------------------------------------------
st.header(t("4 · Concatenate the heads, project with $W^O$"))
st.markdown(
    t(
        "All {heads} heads run in parallel on the same query; their outputs ($d_v$ = {d_v} each) are concatenated "
        "into one vector of {width} numbers and multiplied by $W^O$ ({width} × {d_model}).",
        heads=view.n_heads,
        d_v=d_v,
        width=view.n_heads * d_v,
        d_model=config.d_model,
    )
)
head_labels = [
    t("head {head} (above)", head=h + 1) if h == head - 1 else t("head {head}", head=h + 1) for h in range(view.n_heads)
]
show_figure(
    values_heatmap(
        steps.all_head_outputs[:, dims],
        head_labels,
        decimals=3,
        title=wrap_words(t("Concat(head<sub>1</sub> … head<sub>{h}</sub>), a row per head", h=view.n_heads)) + cut(d_v),
        lang=current_language(),
    ),
    "Step by step heads",
    key="sbs_heads",
)
show_figure(
    values_heatmap(
        steps.output[None, dims],
        [t("output")],
        title=f"Concat · W<sup>O</sup> + b{cut(config.d_model)}",
        decimals=3,
        lang=current_language(),
    ),
    "Step by step output",
    key="sbs_output",
)

reference = translation.attention.family(family)[layer - 1, head - 1, query]
agreement = float(np.abs(steps.weights - reference).max())
st.success(
    t(
        "Recomputed stage by stage in float64 from q, K, V, the numbers match the model's own to {error:.1e}; the "
        "softmax row equals the attention map of the other pages (max difference {difference:.1e}).",
        error=steps.recomputed_error,
        difference=agreement,
    ),
    icon=":material/check_circle:",
)


# ---- why √d_k --------------------------------------------------------------------------------------------
@st.fragment
def why_sqrt_dk() -> None:
    st.header(t("Why divide by √d_k?"))
    st.markdown(
        t(
            "Section 3.2.1: *“for large values of d_k, the dot products grow large in magnitude, pushing the softmax "
            "function into regions where it has extremely small gradients.”* If q and k have independent components "
            "of mean 0 and variance 1, q·k = Σᵢ qᵢkᵢ has variance d_k. Random vectors, seeded, so the numbers are "
            "reproducible:"
        )
    )
    left, middle, right = st.columns(3)
    note_link_value("sbs_demo_dk", [str(d) for d in DEMO_D_KS], 64)
    d_k_demo = left.select_slider(
        t("d_k for the example"),
        options=DEMO_D_KS,
        key="sbs_demo_dk",
        bind="query-params",
        value=None if "sbs_demo_dk" in st.session_state else 64,
    )
    n_keys = middle.slider(t("Keys"), min_value=2, max_value=32, value=10, key="sbs_demo_keys")
    seed = right.number_input(t("Seed"), min_value=0, max_value=10_000, value=0, step=1, key="sbs_demo_seed")
    rows = demo_rows(n_keys, int(seed))
    unscaled, scaled = scaling_example(d_k_demo, n_keys, int(seed))
    show_figure(
        softmax_comparison(unscaled, scaled, d_k=d_k_demo, lang=current_language()),
        "Why sqrt dk example",
        key="sbs_demo_example",
    )
    row = next(r for r in rows if r.d_k == d_k_demo)
    a, b, c = st.columns(3)
    plain = dict(delta_color="off", delta_arrow="off")
    a.metric("Var(q·k)", f"{row.variance_unscaled:.1f}", delta=f"÷√d_k → {row.variance_scaled:.2f}", **plain)
    b.metric(
        t("Largest softmax weight"),
        f"{row.max_weight_unscaled:.2f}",
        delta=t("scaled → {value}", value=f"{row.max_weight_scaled:.2f}"),
        **plain,
        help=t("Mean over 1000 queries; uniform would be 1/{n} = {uniform:.2f}.", n=n_keys, uniform=1 / n_keys),
    )
    c.metric(
        "‖∂softmax/∂logits‖",
        f"{row.gradient_unscaled:.3f}",
        delta=t("scaled → {value}", value=f"{row.gradient_scaled:.3f}"),
        **plain,
        help=t("Frobenius norm of the softmax Jacobian diag(p) − ppᵀ, mean over queries."),
    )
    title = wrap_words(t("Unscaled logits saturate the softmax as d_k grows ({n} keys, 1000 queries)", n=n_keys))
    show_figure(
        scaling_figure(*scaling_series(rows), title=title, lang=current_language()),
        "Why sqrt dk",
        key="sbs_demo_curves",
    )
    table = scaling_table(rows)
    # The table's prose headers in the page's language; the formula ones (Var(q·k), ‖∂softmax‖) stay.
    headers = {
        "max weight": t("largest weight"),
        "max weight ÷√d": t("largest weight") + " ÷√d",
        "entropy": t("entropy"),
        "entropy ÷√d": t("entropy") + " ÷√d",
    }
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=36 * (len(table) + 1) + 4,
        column_config={
            name: st.column_config.NumberColumn(headers.get(name, name), format="%d" if name == "d_k" else "%.3f")
            for name in table[0]
        },
    )
    st.caption(
        t(
            "Without scaling the softmax approaches one-hot as d_k grows and its gradient shrinks towards 0; "
            "divided by √d_k the logits keep variance 1 and the gradient stays the same at every d_k."
        )
    )


why_sqrt_dk()
