"""Positional encoding (Section 3.5): the sinusoids, their wavelengths, what they make similar, the shift as a
rotation, and how strongly position enters the loaded model next to the token embeddings."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.analysis.positional import (
    METRICS,
    dims_for_wavelengths,
    embedding_norms,
    learned_table,
    offset_spread,
    pair_wavelengths,
    shift_linearity,
    similarity,
    sinusoid_table,
)
from explorer.figures.positional import (
    embedding_norms_figure,
    pe_curves,
    pe_heatmap,
    pe_side_by_side,
    similarity_by_offset,
    similarity_heatmap,
)
from explorer.figures.step_by_step import values_heatmap
from explorer.figures.theme import wrap_words
from explorer.inference import encode_sources
from ui.attention_controls import sentence_input
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import controls, page_header
from ui.model_cache import require_model
from ui.urlstate import is_int_in, note_link_value, sync_to_url, url_default

MAX_LENGTH = 400
SHIFT_TOLERANCE = 1e-5

selection, checkpoint = require_model()
config = checkpoint.config
d_model = config.d_model
learned = config.positional == "learned"

page_header(
    t("Positional encoding"),
    t(
        "Self-attention treats its input as a set: permute the tokens and every output is permuted the same way. "
        "The Transformer therefore **adds** a position signal to each token embedding (Section 3.5). The paper "
        "uses fixed sinusoids of geometrically growing wavelength, one sine/cosine pair per two dimensions:"
    ),
    formula=(
        r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right) \qquad "
        r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)"
    ),
)
with controls():
    if learned:
        st.markdown(
            t(
                "The loaded model **{name}** has d_model = **{d_model}** and uses **learned** position "
                "embeddings (Table 3, row E); its table is shown beside the sinusoids.",
                name=selection.name,
                d_model=d_model,
            )
        )
    else:
        st.markdown(
            t(
                "The loaded model **{name}** has d_model = **{d_model}** and uses the **sinusoidal** encoding.",
                name=selection.name,
                d_model=d_model,
            )
        )


note_link_value("pe_length", is_int_in(8, MAX_LENGTH), 100)
length = controls().slider(
    t("Number of positions shown"),
    min_value=8,
    max_value=MAX_LENGTH,
    key="pe_length",
    value=None if "pe_length" in st.session_state else 100,
    bind="query-params",
    help=t("The sinusoids exist for any position; this model reads at most {max_len}.", max_len=config.max_len),
)
table = sinusoid_table(length, d_model)

# ---- 1. the table ---------------------------------------------------------------------------------------
st.header(t("The encoding, position × dimension"))
if learned:
    rows = min(length, config.max_len)
    show_figure(
        pe_side_by_side(
            table[:rows],
            learned_table(checkpoint.model, rows),
            title=wrap_words(t("Sinusoidal vs learned positions, d_model = {d_model}", d_model=d_model)),
            lang=current_language(),
        ),
        "Positional encoding sinusoidal vs learned",
        key="pe_side_by_side",
    )
    st.caption(
        t(
            "The learned table (source side) has its own colour scale; it stops at the model's {max_len} positions. "
            "The paper found both variants nearly equal (Table 3, row E).",
            max_len=config.max_len,
        )
    )
else:
    show_figure(
        pe_heatmap(
            table,
            title=wrap_words(
                t(
                    "Sinusoidal positional encoding, {length} positions × d_model = {d_model}",
                    length=length,
                    d_model=d_model,
                )
            ),
            lang=current_language(),
        ),
        "Positional encoding heatmap",
        key="pe_heatmap",
    )
    st.caption(
        t(
            "Left columns (small i) oscillate fast, right columns barely move: each position gets a unique "
            "pattern, like the digits of a binary counter but smooth."
        )
    )


# ---- 2. the waves ----------------------------------------------------------------------------------------
@st.fragment
def waves_section() -> None:
    st.header(t("Selected dimensions as waves"))
    lengths = pair_wavelengths(d_model)
    options = list(range(d_model))
    default = dims_for_wavelengths(d_model)

    note_link_value("pe_dims", is_int_in(0, d_model - 1), ", ".join(map(str, default)))
    if "pe_dims" in st.session_state:  # another model with a smaller d_model
        st.session_state["pe_dims"] = [d for d in st.session_state["pe_dims"] if d < d_model]
    dims = st.multiselect(
        t("Dimensions"),
        options,
        key="pe_dims",
        max_selections=8,
        bind="query-params",
        default=None if "pe_dims" in st.session_state else default,
        help=t("Dimension 2i is sin, 2i + 1 is cos of the same frequency (pair i)."),
    )
    if dims:
        show_figure(
            pe_curves(table, dims, title=t("PE(pos, dim) against position"), lang=current_language()),
            "Positional encoding waves",
            key="pe_curves",
        )
    else:
        st.info(t("Pick at least one dimension."))
    first, last = lengths[0], lengths[-1]
    # A row that wraps whole metrics: three columns at 1024 px cut their labels and values short.
    row = st.container(horizontal=True, gap="large")
    row.metric(t("Shortest wavelength (pair 0)"), t("{n:.2f} positions", n=first), help="2π", width="content")
    row.metric(
        t("Longest wavelength (pair {pair})", pair=len(lengths) - 1),
        t("{n:,.0f} positions", n=last),
        help=t("2π · 10000^((d_model − 2) / d_model), just under 10000 · 2π"),
        width="content",
    )
    row.metric(
        t("Ratio of neighbouring pairs"),
        f"× {lengths[1] / lengths[0]:.3f}" if len(lengths) > 1 else "–",
        help=t("The wavelengths form a geometric progression: each pair is slower by 10000^(2/d_model)."),
        width="content",
    )
    st.caption(
        t(
            "Wavelengths run from 2π = {shortest:.2f} to 10000 · 2π = {longest:,.0f} positions (the last pair of "
            "d_model = {d_model} reaches {last:,.0f}).",
            shortest=2 * np.pi,
            longest=2e4 * np.pi,
            d_model=d_model,
            last=last,
        )
    )


waves_section()


# ---- 3. similarity ---------------------------------------------------------------------------------------
@st.fragment
def similarity_section() -> None:
    st.header(t("Similarity between positions depends on the offset"))
    url_default("pe_metric", "cosine", allowed=METRICS)
    metric_names = {"cosine": t("cosine"), "dot": t("dot product")}
    metric = st.segmented_control(
        t("Similarity"), METRICS, key="pe_metric", required=True, format_func=metric_names.get
    )
    sync_to_url("pe_metric")
    sim = similarity(table, metric)
    show_figure(
        similarity_heatmap(
            sim,
            metric=metric,
            title=wrap_words(t("{metric} similarity of PE(p) and PE(q)", metric=metric_names[metric])),
            lang=current_language(),
        ),
        f"Positional encoding {metric} similarity",
        key="pe_similarity",
    )
    show_figure(
        similarity_by_offset(
            sim,
            metric=metric,
            title=wrap_words(t("{metric} of PE(p) and PE(p + k) against the offset k", metric=metric_names[metric])),
            lang=current_language(),
        ),
        f"Positional encoding {metric} by offset",
        key="pe_similarity_offset",
    )
    spread = float(offset_spread(sim).max())
    st.markdown(
        t(
            "Every diagonal of the matrix is constant: PE(p)·PE(p+k) = Σᵢ cos(k·ωᵢ) does not depend on p. "
            "Largest spread along any diagonal (max − min over p): **{spread:.1e}**. The similarity falls off "
            "with |k| and is symmetric, so nearby positions look alike and far ones do not.",
            spread=spread,
        )
    )
    if learned:
        rows = min(length, config.max_len)
        learned_sim = similarity(learned_table(checkpoint.model, rows), metric)
        show_figure(
            similarity_heatmap(
                learned_sim,
                metric=metric,
                title=wrap_words(t("Learned positions: {metric} similarity", metric=metric_names[metric])),
                lang=current_language(),
            ),
            f"Learned positions {metric} similarity",
            key="pe_learned_similarity",
        )
        st.caption(
            t(
                "For the learned table the largest spread along a diagonal is {spread:.2f}: nothing forces it to "
                "depend on the offset alone.",
                spread=float(offset_spread(learned_sim).max()),
            )
        )


similarity_section()


# ---- 4. shift = rotation ---------------------------------------------------------------------------------
@st.fragment
def shift_section() -> None:
    st.header(t("PE(pos + k) is a fixed linear function of PE(pos)"))
    st.markdown(
        t(
            "The paper chose sinusoids because *“for any fixed offset k, PE(pos+k) can be represented as a linear "
            "function of PE(pos)”*. Each sin/cos pair is a point on a circle turning at speed ωᵢ, so moving k "
            "positions on is a rotation by k·ωᵢ in every pair: one block-diagonal matrix M_k that does not depend "
            "on pos. Computed below in float64 over every shown position."
        )
    )
    note_link_value("pe_offset", is_int_in(-50, 50), 3)
    offset = st.slider(
        t("Offset k"),
        min_value=-50,
        max_value=50,
        key="pe_offset",
        bind="query-params",
        value=None if "pe_offset" in st.session_state else 3,
    )
    check = shift_linearity(offset, d_model, positions=length)
    row = st.container(horizontal=True, gap="large")
    row.metric(
        "max |PE(pos+k) − PE(pos)·M_k|",
        f"{check.max_abs_error:.2e}",
        help=t("over pos = 0 … {last} and all {d_model} dimensions, float64", last=length - 1, d_model=d_model),
        width="content",
    )
    row.metric(
        "max |M_kᵀM_k − I|",
        f"{check.max_rotation_error:.2e}",
        help=t("M_k is a rotation: it keeps lengths."),
        width="content",
    )
    row.metric(t("Positions checked"), f"{check.positions}", width="content")
    if check.max_abs_error < SHIFT_TOLERANCE:
        st.success(
            t(
                "One matrix maps every PE(pos) to PE(pos {sign} {k}): error {error:.2e} < {tolerance:g}.",
                sign="+" if offset >= 0 else "−",
                k=abs(offset),
                error=check.max_abs_error,
                tolerance=SHIFT_TOLERANCE,
            ),
            icon=":material/check_circle:",
        )
    else:
        st.error(t("The shift is not linear here: error {error:.2e}.", error=check.max_abs_error))
    block = min(8, d_model)
    show_figure(
        values_heatmap(
            check.matrix[:block, :block],
            [t("dim {dim}", dim=i) for i in range(block)],
            title=wrap_words(
                t("M_k for k = {offset}: the first {block} × {block} entries", offset=offset, block=block)
            ),
            x_title=t("output dimension"),
            decimals=3,
            bound=1.0,
            lang=current_language(),
        ),
        f"Shift matrix k={offset}",
        key="pe_shift_matrix",
    )
    st.caption(
        t(
            "The full matrix is {d_model} × {d_model}, zero outside the 2 × 2 blocks on its diagonal; each block is a "
            "rotation [[cos kω, −sin kω], [sin kω, cos kω]].",
            d_model=d_model,
        )
    )


shift_section()


# ---- 5. how position enters the model ----------------------------------------------------------------------
@st.fragment
def norms_section() -> None:
    st.header(t("How position enters the model"))
    st.markdown(
        t(
            "The encoder's input at position pos is **E[token] · √d_model + PE(pos)** (Sections 3.4 and 3.5): "
            "the embedding is scaled by √{d_model} = {scale:.1f} before the position is added. "
            "The bars compare the sizes of the two terms for a sentence, with this model's own embedding table.",
            d_model=d_model,
            scale=np.sqrt(d_model),
        )
    )
    sentence = sentence_input("pe_sentence", checkpoint.metadata)
    if not sentence:
        st.info(t("Type a sentence to see its embedding and position norms."))
        return
    ids, truncated = encode_sources(checkpoint.tokenizer, [sentence], config.max_len, config.eos_id)
    if truncated[0]:
        st.warning(
            t(
                "The sentence is longer than this model reads; only its first {kept} tokens (plus </s>) are shown.",
                kept=config.max_len - 1,
            ),
            icon=":material/content_cut:",
        )
    pieces = checkpoint.tokenizer.pieces(ids[0])
    norms = embedding_norms(checkpoint.model, ids[0], pieces)
    show_figure(
        embedding_norms_figure(
            norms.token,
            norms.position,
            norms.total,
            norms.labels,
            title=wrap_words(t("Token term vs position term at the encoder input")),
            lang=current_language(),
        ),
        "Embedding and position norms",
        key="pe_norms",
    )
    ratio = float(np.mean(norms.token / np.where(norms.position == 0, 1, norms.position)))
    st.caption(
        t(
            "‖PE‖ = √(d_model / 2) = {norm:.2f} for every position (half the dimensions are sines, half cosines, "
            "sin² + cos² = 1).",
            norm=np.sqrt(d_model / 2),
        )
        if not learned
        else t("Learned position vectors have their own norms.")
    )
    st.markdown(
        t(
            "On average the token term is **{ratio:.1f}×** the position term. Mean cosine between the two: "
            "**{cosine:+.2f}** — nearly orthogonal, so the sum keeps both.",
            ratio=ratio,
            cosine=float(np.mean(norms.cosine)),
        )
    )
    st.dataframe(
        norms.rows(),
        hide_index=True,
        width="stretch",
        column_config={
            "position": st.column_config.NumberColumn(t("position")),
            "token": st.column_config.TextColumn(t("token")),
            "‖sum‖": st.column_config.NumberColumn(f"‖{t('sum')}‖", format="%.3f"),
            **{name: st.column_config.NumberColumn(format="%.3f") for name in ("‖E·√d‖", "‖PE‖", "cos(E, PE)")},
        },
    )


norms_section()
