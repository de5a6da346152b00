"""Why the scores are divided by √d_k (Section 3.2.1): random queries and keys, seeded, show the variance of
q·k growing with d_k and the unscaled softmax saturating, against the scaled one."""

from __future__ import annotations

import streamlit as st

from explorer.analysis.step_by_step import ScalingRow, scaling_example, scaling_series, scaling_table, sqrt_dk_demo
from explorer.figures.step_by_step import scaling_figure, softmax_comparison
from explorer.figures.theme import wrap_words
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import section_header
from ui.step_by_step.tables import full_height
from ui.urlstate import bound_choice

DEMO_D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@st.cache_data(show_spinner=False, max_entries=16)
def demo_rows(n_keys: int, seed: int) -> list[ScalingRow]:
    return sqrt_dk_demo(DEMO_D_KS, n_keys=n_keys, seed=seed)


@st.fragment
def why_sqrt_dk() -> None:
    """One example softmax with and without the division (?sbs_demo_dk=), and the trend over every d_k."""
    section_header(
        t("Why divide by √d_k?"),
        t(
            "Section 3.2.1: *“for large values of d_k, the dot products grow large in magnitude, pushing the softmax "
            "function into regions where it has extremely small gradients.”* If q and k have independent components "
            "of mean 0 and variance 1, q·k = Σᵢ qᵢkᵢ has variance d_k. Random vectors, seeded, so the numbers are "
            "reproducible:"
        ),
    )
    left, middle, right = st.columns(3)
    d_k_demo: int = bound_choice(left.select_slider, t("d_k for the example"), DEMO_D_KS, "sbs_demo_dk", 64, cast=int)
    n_keys = middle.slider(t("Keys"), min_value=2, max_value=32, value=10, key="sbs_demo_keys")
    seed = int(right.number_input(t("Seed"), min_value=0, max_value=10_000, value=0, step=1, key="sbs_demo_seed"))
    rows = demo_rows(n_keys, seed)
    unscaled, scaled = scaling_example(d_k_demo, n_keys, seed)
    show_figure(
        softmax_comparison(unscaled, scaled, d_k=d_k_demo, lang=current_language()),
        "Why sqrt dk example",
        key="sbs_demo_example",
    )
    row = next(r for r in rows if r.d_k == d_k_demo)
    a, b, c = st.columns(3)
    a.metric(
        "Var(q·k)",
        f"{row.variance_unscaled:.1f}",
        delta=f"÷√d_k → {row.variance_scaled:.2f}",
        delta_color="off",
        delta_arrow="off",
    )
    b.metric(
        t("Largest softmax weight"),
        f"{row.max_weight_unscaled:.2f}",
        delta=t("scaled → {value}", value=f"{row.max_weight_scaled:.2f}"),
        delta_color="off",
        delta_arrow="off",
        help=t("Mean over 1000 queries; uniform would be 1/{n} = {uniform:.2f}.", n=n_keys, uniform=1 / n_keys),
    )
    c.metric(
        "‖∂softmax/∂logits‖",
        f"{row.gradient_unscaled:.3f}",
        delta=t("scaled → {value}", value=f"{row.gradient_scaled:.3f}"),
        delta_color="off",
        delta_arrow="off",
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
        height=full_height(len(table)),
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
