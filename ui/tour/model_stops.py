"""The stops on the model's parts (1-5 and 10): Figure 1 live, scaled dot-product attention, multi-head
attention and its three uses, the feed-forward network and embeddings, positional encoding, and the masks
that came after the paper. Each view draws its controls and its live figure and returns the (layer, head) it
shows, so the page's "open in the full page" link carries them.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer import claims
from explorer.analysis.positional import shift_linearity
from explorer.analysis.step_by_step import sqrt_dk_demo
from explorer.figures import architecture, tour_attention, tour_embeddings
from explorer.paper import FAMILIES, FAMILY_TITLES
from explorer.text.pieces import shown_pieces
from explorer.tour import numbers
from explorer.tour.tables import leading_columns
from ui.attention_view import family_pieces
from ui.figures import show_figure
from ui.i18n import t
from ui.positional.word_order import word_order_section
from ui.step_by_step.additive import additive_trend
from ui.tour.context import Shown, TourContext, layer_and_head, pick, stop_figure
from ui.tour.paper_live import averaging_caption, conv_caption, decoder_words
from ui.tour.state import computed, revealed

SATURATION_D_KS = (4, 16, 64, 256, 1024)

# ---- 1 -------------------------------------------------------------------------------------------------


def architecture_view(ctx: TourContext) -> Shown:
    config = ctx.config
    layers = min(config.n_encoder_layers, config.n_decoder_layers)
    slot = st.container()
    layer = pick(t("Layer"), "tour_arch_layer", layers)
    blocks = computed(
        "blocks", ctx.selection, ctx.sentence, lambda ck, tr: numbers.block_tensors(ck.model, tr, layer - 1), layer
    )
    if st.session_state.get("tour_block") not in blocks:
        st.session_state["tour_block"] = "enc_self_attention"
    fig = architecture.architecture_figure(
        numbers.ENCODER_BLOCKS,
        numbers.DECODER_BLOCKS,
        {k: v.shape for k, v in blocks.items()},
        n_encoder=config.n_encoder_layers,
        n_decoder=config.n_decoder_layers,
        selected=st.session_state["tour_block"],
        lang=ctx.lang,
    )
    with slot:
        event = stop_figure(
            fig, t("Figure 1, live"), "architecture", on_select="rerun", selection_mode="points", downloads=False
        )
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    clicked = next((p.get("customdata") for p in points if p.get("customdata") in blocks), None)
    if clicked and clicked != st.session_state["tour_block"]:
        st.session_state["tour_block"] = clicked
        st.rerun()
    block = st.selectbox(t("Block"), list(blocks), key="tour_block", format_func=lambda b: t(numbers.BLOCK_LABELS[b]))
    assert block is not None, "the block is seeded above"
    tensor = blocks[block]
    st.markdown(
        t(
            "**{block}**, layer {layer}: a tensor of shape ({shape}), one row per token.",
            block=t(numbers.BLOCK_LABELS[block]),
            layer=layer,
            shape=" \u00d7 ".join(map(str, tensor.shape)),
        )
    )
    st.dataframe(
        {t("token"): shown_pieces(tensor.rows), **leading_columns(tensor.values, 6, 3)},
        hide_index=True,
        height=min(300, 36 * (len(tensor.rows) + 1) + 4),
    )
    decoder_words()
    st.caption(claims.model_beside_paper(config, ctx.lang))
    averaging_caption(ctx)
    return layer, None


# ---- 2 -------------------------------------------------------------------------------------------------


def scaled_dot_product_view(ctx: TourContext) -> Shown:
    slot = st.container()
    # Without the division the figure shows the exercise's answer: the switch waits for the guess.
    hidden = not revealed("sqrt_dk")
    if hidden or "tour_sdp_scaled" not in st.session_state:
        st.session_state["tour_sdp_scaled"] = True
    scaled = st.toggle(
        t("Divide by \u221ad_k"),
        key="tour_sdp_scaled",
        disabled=hidden,
        help=t("Check your guess first: without the division the figure shows the answer.") if hidden else None,
    )
    layer, head = layer_and_head(ctx, "tour_sdp")
    head_data = computed(
        "scaled_head",
        ctx.selection,
        ctx.sentence,
        lambda ck, tr: numbers.scaled_head(ck.model, tr, layer - 1, head - 1),
        layer,
        head,
    )
    weights = head_data.scaled_weights if scaled else head_data.unscaled_weights
    with slot:
        stop_figure(
            tour_attention.scaling_heatmap(
                weights, head_data.tokens, scaled=scaled, layer=layer, head=head, d_k=head_data.d_k, lang=ctx.lang
            ),
            t("Scaled dot-product attention"),
            "scaled_dot_product",
        )
    rows = sqrt_dk_demo(SATURATION_D_KS)
    show_figure(
        tour_attention.saturation_figure(
            [r.d_k for r in rows],
            [r.max_weight_unscaled for r in rows],
            [r.max_weight_scaled for r in rows],
            [r.entropy_unscaled for r in rows],
            [r.entropy_scaled for r in rows],
            model_d_k=head_data.d_k,
            lang=ctx.lang,
        ),
        t("Softmax saturation"),
        key="tour_saturation",
        downloads=False,
    )
    with st.expander(t("Q, K and V of this head (first dimensions)")):
        st.dataframe(
            {
                t("token"): shown_pieces(head_data.tokens),
                **leading_columns(head_data.query, 4, 2, "q"),
                **leading_columns(head_data.key, 4, 2, "k"),
                **leading_columns(head_data.value, 4, 2, "v"),
            },
            hide_index=True,
        )
    with st.expander(t("Additive attention instead? (Section 3.2.1)")):
        st.markdown("score(q, k) = v\u1d40 tanh(W\u2081q + W\u2082k)")
        additive_trend("tour", head_data.d_k)
    return layer, head


# ---- 3 -------------------------------------------------------------------------------------------------


def multi_head_view(ctx: TourContext) -> Shown:
    layers = min(ctx.config.n_encoder_layers, ctx.config.n_decoder_layers)
    slot = st.container()
    families = {f: t(FAMILY_TITLES[f]) for f in FAMILIES}
    if st.session_state.get("tour_mh_family") not in families:
        # The masked one first: the mask is what is new here, and cross-attention is the exercise's answer.
        st.session_state["tour_mh_family"] = "decoder_self"
    # Pills, not a segmented control: three long names wrap onto separate rows in a narrow column, and
    # joined buttons lose their borders when they wrap.
    family = st.pills(t("Use"), list(families), key="tour_mh_family", required=True, format_func=families.__getitem__)
    assert family is not None, "a required pills widget always has a value"
    layer = pick(t("Layer"), "tour_mh_layer", layers, default=layers)
    assert ctx.translation.attention is not None, "the tour translates with attention"
    weights = ctx.translation.attention.family(family)[layer - 1]
    rows, cols, _, _ = family_pieces(ctx.translation, family)
    with slot:
        stop_figure(
            tour_attention.heads_figure(
                weights,
                rows,
                cols,
                masked=family == "decoder_self",
                title=f"{families[family]} \u00b7 {t('layer {layer}', layer=layer)}",
                lang=ctx.lang,
            ),
            t("Multi-head attention and its three uses"),
            "multi_head",
        )
    if family == "decoder_self":
        st.caption(t("Grey cells are hidden by the decoder's mask: position i may only attend to positions up to i."))
    st.caption(claims.model_beside_paper(ctx.config, ctx.lang))
    return layer, None


# ---- 4 -------------------------------------------------------------------------------------------------


def ffn_embeddings_view(ctx: TourContext) -> Shown:
    slot = st.container()
    layer = pick(t("Layer"), "tour_ffn_layer", ctx.config.n_encoder_layers)
    activity = computed(
        "ffn", ctx.selection, ctx.sentence, lambda ck, tr: numbers.feed_forward_activity(ck.model, tr, layer - 1), layer
    )
    with slot:
        stop_figure(
            tour_embeddings.ffn_figure(
                activity.hidden,
                activity.tokens,
                layer=layer,
                show_zero_share=revealed("relu_zeros"),
                activation=activity.activation,
                lang=ctx.lang,
            ),
            t("Feed-forward network"),
            "ffn_embeddings",
        )
        if activity.activation != "relu":
            st.caption(
                t(
                    "This model's feed-forward network uses {function} where the paper has a ReLU: negative "
                    "pre-activations become small negative values, not zeros.",
                    function=tour_embeddings.ACTIVATION_NAMES[activity.activation],
                )
            )
    show_figure(
        tour_embeddings.norms_figure(
            activity.tokens,
            activity.embedding_norm,
            activity.scaled_norm,
            activity.positional_norm,
            d_model=ctx.config.d_model,
            lang=ctx.lang,
        ),
        t("Embedding lengths"),
        key="tour_norms",
        downloads=False,
    )
    shared = (
        t("one matrix, shared by both embeddings and the output projection")
        if activity.shared
        else t("separate matrices for the two embeddings and the output projection")
    )
    scale = claims.embedding_scale(
        ctx.config.d_model**0.5,
        float(np.median(activity.scaled_norm)),
        float(np.median(activity.positional_norm)),
        ctx.lang,
    )
    st.caption(f"{t('This model: {shared}.', shared=shared)} {scale}")
    conv_caption(ctx)
    return layer, None


# ---- 5 -------------------------------------------------------------------------------------------------


def positional_view(ctx: TourContext) -> Shown:
    n = len(ctx.translation.source_ids)
    table = computed("positions", ctx.selection, ctx.sentence, lambda ck, _tr: numbers.positions_of(ck.model, n), n)
    stop_figure(
        tour_embeddings.positional_figure(table, ctx.translation.source_pieces, lang=ctx.lang),
        t("Positional encoding"),
        "positional",
    )
    offset = st.slider(t("Offset k"), 1, 20, 3, key="tour_pe_offset")
    check = shift_linearity(offset, ctx.config.d_model, positions=max(n, 2))
    if ctx.config.positional == "sinusoidal":
        st.markdown(
            t(
                "One fixed matrix M_k maps PE(pos) to PE(pos+{k}) for every position of this sentence: "
                "largest error {error}, and M_k is a rotation (error {rotation}).",
                k=offset,
                error=f"{check.max_abs_error:.1e}",
                rotation=f"{check.max_rotation_error:.1e}",
            )
        )
    else:
        st.info(
            t(
                "This model learned its positions (Table 3, row E): the linear map holds for the sinusoids, not "
                "for its table."
            )
        )
    st.markdown(t("##### Word order"))
    word_order_section(ctx.selection, ctx.lang, "tour", lambda label, key, count: pick(t(label), key, count))
    return None, None


# ---- 10 ------------------------------------------------------------------------------------------------


def beyond_view(ctx: TourContext) -> Shown:
    slot = st.container()
    layer, head = layer_and_head(ctx, "tour_mask")
    both = computed(
        "masks", ctx.selection, ctx.sentence, lambda ck, tr: numbers.mask_comparison(ck.model, tr, layer - 1), layer
    )
    with slot:
        stop_figure(
            tour_attention.mask_figure(
                both.bidirectional[head - 1], both.causal[head - 1], both.tokens, layer=layer, head=head, lang=ctx.lang
            ),
            t("Encoder mask and causal mask"),
            "beyond",
        )
    st.caption(
        t(
            "Mean attention distance: {bidirectional} tokens with the encoder mask, {causal} with the causal "
            "mask. The model was trained with the encoder mask here; the causal run shows what the mask alone "
            "changes.",
            bidirectional=f"{numbers.attention_distance(both.bidirectional):.2f}",
            causal=f"{numbers.attention_distance(both.causal):.2f}",
        )
    )
    return layer, head
