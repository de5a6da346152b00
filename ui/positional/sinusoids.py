"""The Positional encoding page's sections on the sinusoids themselves (Section 3.5): the table, the waves,
the similarity between positions, and the shift as a rotation. Beside them, a learned table: the loaded model's,
or Table 3 row (E)'s (ui/positional/learned_source.py)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.analysis.positional import (
    METRICS,
    dims_for_wavelengths,
    offset_spread,
    pair_wavelengths,
    shift_linearity,
    similarity,
    sinusoid_table,
)
from explorer.config import ModelConfig
from explorer.figures.positional import (
    pe_curves,
    pe_heatmap,
    pe_side_by_side,
    similarity_by_offset,
    similarity_heatmap,
)
from explorer.figures.step_by_step import values_heatmap
from explorer.figures.theme import wrap_words
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import controls, page_header, section_header
from ui.markdown import shown_value
from ui.urlstate import bound_choice, bound_multiselect, bound_slider

MAX_LENGTH = 400
SHIFT_TOLERANCE = 1e-5


def intro(name: str, config: ModelConfig) -> None:
    """The page's title, the paper's formula, and which encoding the loaded model uses."""
    page_header(
        t("Positional encoding"),
        t(
            "Self-attention treats its input as a set: permute the tokens and every output is permuted the same "
            "way. The Transformer therefore **adds** a position signal to each token embedding (Section 3.5). The "
            "paper uses fixed sinusoids of geometrically growing wavelength, one sine/cosine pair per two dimensions:"
        ),
        formula=(
            r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right) \qquad "
            r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)"
        ),
    )
    with controls():
        if config.positional == "learned":
            st.markdown(
                t(
                    "The loaded model **{name}** has d_model = **{d_model}** and uses **learned** position "
                    "embeddings (Table 3, row E); its table is shown beside the sinusoids.",
                    name=shown_value(name),
                    d_model=config.d_model,
                )
            )
        else:
            st.markdown(
                t(
                    "The loaded model **{name}** has d_model = **{d_model}** and uses the **sinusoidal** encoding.",
                    name=shown_value(name),
                    d_model=config.d_model,
                )
            )


def length_control(config: ModelConfig) -> int:
    """How many positions the figures show (?pe_length=)."""
    length: int = bound_slider(
        controls(),
        t("Number of positions shown"),
        "pe_length",
        8,
        MAX_LENGTH,
        100,
        help=t("The sinusoids exist for any position; this model reads at most {max_len}.", max_len=config.max_len),
    )
    return length


def table_section(table: np.ndarray, learned: np.ndarray | None) -> None:
    """The encoding (positions, d_model) as a heatmap, position × dimension; beside the learned table
    (positions, d) where one is chosen (ui/positional/learned_source.py), against sinusoids of its own width."""
    length, d_model = table.shape
    st.header(t("The encoding, position × dimension"))
    if learned is not None:
        d_learned = learned.shape[1]
        show_figure(
            pe_side_by_side(
                sinusoid_table(len(learned), d_learned),
                learned,
                title=wrap_words(t("Sinusoidal vs learned positions, d_model = {d_model}", d_model=d_learned)),
                lang=current_language(),
            ),
            "Positional encoding sinusoidal vs learned",
            key="pe_side_by_side",
        )
        st.caption(
            t(
                "The learned table (source side) has its own colour scale; it stops at the model's {max_len} "
                "positions. The paper found both variants nearly equal (Table 3, row E).",
                max_len=len(learned),
            )
        )
        return
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


@st.fragment
def waves_section(table: np.ndarray) -> None:
    """A few dimensions as waves against position (?pe_dims=), and the range of wavelengths."""
    d_model = table.shape[1]
    st.header(t("Selected dimensions as waves"))
    lengths = pair_wavelengths(d_model)
    dims = bound_multiselect(  # a kept choice loses the dimensions another, smaller model lacks
        st,
        t("Dimensions"),
        list(range(d_model)),
        "pe_dims",
        dims_for_wavelengths(d_model),
        max_selections=8,
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


@st.fragment
def similarity_section(table: np.ndarray, learned: np.ndarray | None) -> None:
    """Cosine or dot product between every two positions (?pe_metric=), and against the offset alone; the same
    for the chosen learned table (positions, d), if any."""
    st.header(t("Similarity between positions depends on the offset"))
    metric_names = {"cosine": t("cosine"), "dot": t("dot product")}
    metric = bound_choice(
        st.segmented_control,
        t("Similarity"),
        METRICS,
        "pe_metric",
        "cosine",
        required=True,
        format_func=metric_names.__getitem__,
    )
    sim = similarity(table, metric)
    # (figure builder, its title, the download's name, the chart's key)
    for figure, title, name, key in (
        (
            similarity_heatmap,
            t("{metric} similarity of PE(p) and PE(q)", metric=metric_names[metric]),
            f"Positional encoding {metric} similarity",
            "pe_similarity",
        ),
        (
            similarity_by_offset,
            t("{metric} of PE(p) and PE(p + k) against the offset k", metric=metric_names[metric]),
            f"Positional encoding {metric} by offset",
            "pe_similarity_offset",
        ),
    ):
        show_figure(figure(sim, metric=metric, title=wrap_words(title), lang=current_language()), name, key=key)
    st.markdown(
        t(
            "Every diagonal of the matrix is constant: PE(p)·PE(p+k) = Σᵢ cos(k·ωᵢ) does not depend on p. "
            "Largest spread along any diagonal (max − min over p): **{spread:.1e}**. The similarity falls off "
            "with |k| and is symmetric, so nearby positions look alike and far ones do not.",
            spread=float(offset_spread(sim).max()),
        )
    )
    if learned is None:
        return
    learned_sim = similarity(learned, metric)
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


@st.fragment
def shift_section(d_model: int, length: int) -> None:
    """One matrix M_k maps PE(pos) to PE(pos + k) for every shown position (?pe_offset=)."""
    section_header(
        t("PE(pos + k) is a fixed linear function of PE(pos)"),
        t(
            "The paper chose sinusoids because *“for any fixed offset k, PE(pos+k) can be represented as a linear "
            "function of PE(pos)”*. Each sin/cos pair is a point on a circle turning at speed ωᵢ, so moving k "
            "positions on is a rotation by k·ωᵢ in every pair: one block-diagonal matrix M_k that does not depend "
            "on pos. Computed below in float64 over every shown position."
        ),
    )
    offset: int = bound_slider(st, t("Offset k"), "pe_offset", -50, 50, 3)
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
