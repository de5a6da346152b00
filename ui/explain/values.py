"""Value-weighted beside raw attention for one head, and the sink table of a family
(explorer/explain/value_weighted.py, explorer/explain/sinks.py)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.explain.sinks import SINK_KEEPS, SINK_RAW_SHARE, family_sinks
from explorer.figures.compare import Panel, compare_heads
from explorer.inference import Translation
from explorer.paper import FAMILY_SHORT
from ui.attention_controls import family_picker, number_picker
from ui.attention_view import attention_view
from ui.compare.panels import layers_of
from ui.explain.compute import explained_for
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import fit_height
from ui.model_picker import Selection


def values_section(side: Any, selection: Selection, checkpoint: Checkpoint, translation: Translation) -> None:
    """The chosen head's raw weights and value-weighted shares side by side, then every head of the family with
    its two shares on end and punctuation tokens, sinks flagged."""
    config = checkpoint.config
    with side:
        family = family_picker("x_family", vertical=True)
        n_layers = layers_of(family, config.n_encoder_layers, config.n_decoder_layers)
        layer = number_picker("Layer", "x_layer", n_layers, default=n_layers)
        head = number_picker("Head", "x_head", config.n_heads)
    with st.spinner(t("Computing the value-weighted attention of every head…")):
        explained = explained_for(selection, translation)
    view = attention_view(translation, family, "pieces", current_language())
    where = f"{t(FAMILY_SHORT[family])} · {t('layer')} {layer} · {t('head')} {head}"
    panels = [
        Panel(view.weights[layer - 1, head - 1], view.query_labels, view.key_labels, t("Raw weights α"),
              view.query_title, view.key_title),
        Panel(explained.weighted(family)[layer - 1, head - 1], view.query_labels, view.key_labels,
              t("Value-weighted ‖α f(x)‖, share of the row"), view.query_title, view.key_title),
    ]  # fmt: skip
    figure = compare_heads(panels, zmax=1.0, title=where, lang=current_language())
    show_figure(fit_height(figure, width=900), f"value weighted {family} {layer} {head}", key="explain_values")
    st.caption(
        t(
            "Left: the weights the head puts on each key. Right: what it moves from each key, ‖α_ij · f(x_j)‖ with "
            "f the value projection and the head's slice of W^O (Kobayashi et al., 2020), as a share of the row. "
            "A key that is bright on the left and dark on the right is looked at but contributes little."
        )
    )
    keys = translation.source_pieces if family != "decoder_self" else translation.target_input_pieces
    sinks = family_sinks(explained, family, keys)
    st.markdown(
        t("**Sinks**: weight on end and punctuation tokens (`</s>`, `<s>`, “.”, “,”) against what moves from them")
    )
    rows = [
        {
            t("Layer"): s.layer + 1,
            t("Head"): s.head + 1,
            t("name"): s.name,
            t("raw share"): round(s.raw_share, 3),
            t("value-weighted share"): round(s.weighted_share, 3),
            t("sink"): s.is_sink,
        }
        for s in sinks
    ]
    st.dataframe(rows, hide_index=True, key="explain_sinks")
    flagged = [s.name for s in sinks if s.is_sink]
    st.caption(
        t(
            "A head is a sink when at least {raw:.0%} of its weight sits on those tokens but the value-weighted share "
            "there is at most {keeps:.0%} of that. Here: {found}.",
            raw=SINK_RAW_SHARE,
            keeps=SINK_KEEPS,
            found=", ".join(flagged) if flagged else t("no head of this family on this sentence"),
        )
    )
