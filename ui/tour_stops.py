"""What each stop of the tour draws: its controls and its live figure. The page calls `STOP_VIEWS[key](ctx)`.

Every figure is computed from the loaded checkpoint on the tour's sentence (cached in ui/tour_state.py);
each view returns the (layer, head) it shows, so the page's "open in the full page" link carries them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from explorer.analysis.positional import shift_linearity
from explorer.analysis.step_by_step import sqrt_dk_demo
from explorer.checkpoint import Checkpoint
from explorer.complexity.measure import measure_layers
from explorer.complexity.table1 import table1_rows
from explorer.figures import architecture, tour_attention, tour_embeddings, tour_training
from explorer.inference import Translation
from explorer.tour import numbers
from explorer.tour.variants import start_variants, variant_curves
from explorer.training.run_folder import JobError
from ui.figures import show_figure
from ui.i18n import t
from ui.model_picker import Selection
from ui.tour_state import beam_rows, computed
from ui.train.runs import manager

SATURATION_D_KS = (4, 16, 64, 256, 1024)


@dataclass(frozen=True)
class TourContext:
    selection: Selection
    checkpoint: Checkpoint
    sentence: str
    translation: Translation
    lang: str

    @property
    def config(self):
        return self.checkpoint.config


def _pick(label: str, key: str, count: int, default: int = 1) -> int:
    """A 1-based layer/head choice as a compact button row (kept in the session, not the URL)."""
    if st.session_state.get(key) not in range(1, count + 1):
        st.session_state[key] = min(max(default, 1), count)
    return int(st.segmented_control(label, list(range(1, count + 1)), key=key, required=True))


def _layer_and_head(ctx: TourContext, prefix: str) -> tuple[int, int]:
    """Encoder layer and head pickers side by side where they fit, one under the other where they do not (a
    horizontal container wraps whole widgets; columns would squeeze a row of head buttons onto two lines)."""
    with st.container(horizontal=True, gap="large"):
        layer = _pick(t("Layer"), f"{prefix}_layer", ctx.config.n_encoder_layers)
        head = _pick(t("Head"), f"{prefix}_head", ctx.config.n_heads)
    return layer, head


def _figure(fig, name: str, stop: str, **kwargs):
    return show_figure(fig, name, key=f"tour_figure_{stop}", **kwargs)


# ---- 1 -------------------------------------------------------------------------------------------------


def architecture_view(ctx: TourContext) -> tuple[int | None, int | None]:
    config = ctx.config
    layers = min(config.n_encoder_layers, config.n_decoder_layers)
    slot = st.container()
    layer = _pick(t("Layer"), "tour_arch_layer", layers)
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
        event = _figure(
            fig, t("Figure 1, live"), "architecture", on_select="rerun", selection_mode="points", downloads=False
        )
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    clicked = next((p.get("customdata") for p in points if p.get("customdata") in blocks), None)
    if clicked and clicked != st.session_state["tour_block"]:
        st.session_state["tour_block"] = clicked
        st.rerun()
    block = st.selectbox(t("Block"), list(blocks), key="tour_block", format_func=lambda b: t(numbers.BLOCK_LABELS[b]))
    tensor = blocks[block]
    st.markdown(
        t(
            "**{block}**, layer {layer}: a tensor of shape ({shape}), one row per token.",
            block=t(numbers.BLOCK_LABELS[block]),
            layer=layer,
            shape=" \u00d7 ".join(map(str, tensor.shape)),
        )
    )
    columns = min(6, tensor.values.shape[1])
    st.dataframe(
        {
            t("token"): [r.replace("\u2581", "") for r in tensor.rows],
            **{f"[{j}]": np.round(tensor.values[:, j], 3) for j in range(columns)},
        },
        hide_index=True,
        height=min(300, 36 * (len(tensor.rows) + 1) + 4),
    )
    return layer, None


# ---- 2 -------------------------------------------------------------------------------------------------


def scaled_dot_product_view(ctx: TourContext) -> tuple[int | None, int | None]:
    slot = st.container()
    scaled = st.toggle(t("Divide by \u221ad_k"), value=True, key="tour_sdp_scaled")
    layer, head = _layer_and_head(ctx, "tour_sdp")
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
        _figure(
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
        dims = min(4, head_data.d_k)
        tokens = [p.replace("\u2581", "") for p in head_data.tokens]
        st.dataframe(
            {
                t("token"): tokens,
                **{f"q[{j}]": np.round(head_data.query[:, j], 2) for j in range(dims)},
                **{f"k[{j}]": np.round(head_data.key[:, j], 2) for j in range(dims)},
                **{f"v[{j}]": np.round(head_data.value[:, j], 2) for j in range(dims)},
            },
            hide_index=True,
        )
    return layer, head


# ---- 3 -------------------------------------------------------------------------------------------------


def multi_head_view(ctx: TourContext) -> tuple[int | None, int | None]:
    layers = min(ctx.config.n_encoder_layers, ctx.config.n_decoder_layers)
    slot = st.container()
    families = {
        "encoder_self": t("Encoder self-attention"),
        "decoder_self": t("Masked decoder self-attention"),
        "cross": t("Encoder-decoder attention"),
    }
    if st.session_state.get("tour_mh_family") not in families:
        # The masked one first: the mask is what is new here, and cross-attention is the exercise's answer.
        st.session_state["tour_mh_family"] = "decoder_self"
    # Pills, not a segmented control: three long names wrap onto separate rows in a narrow column, and
    # joined buttons lose their borders when they wrap.
    family = st.pills(t("Use"), list(families), key="tour_mh_family", required=True, format_func=families.get)
    layer = _pick(t("Layer"), "tour_mh_layer", layers, default=layers)
    tr = ctx.translation
    weights = tr.attention.family(family)[layer - 1]
    rows, cols = {
        "encoder_self": (tr.source_pieces, tr.source_pieces),
        "decoder_self": (tr.target_input_pieces, tr.target_input_pieces),
        "cross": (tr.target_output_pieces, tr.source_pieces),
    }[family]
    with slot:
        _figure(
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
    return layer, None


# ---- 4 -------------------------------------------------------------------------------------------------


def ffn_embeddings_view(ctx: TourContext) -> tuple[int | None, int | None]:
    slot = st.container()
    layer = _pick(t("Layer"), "tour_ffn_layer", ctx.config.n_encoder_layers)
    activity = computed(
        "ffn", ctx.selection, ctx.sentence, lambda ck, tr: numbers.feed_forward_activity(ck.model, tr, layer - 1), layer
    )
    with slot:
        _figure(
            tour_embeddings.ffn_figure(activity.hidden, activity.tokens, layer=layer, lang=ctx.lang),
            t("Feed-forward network"),
            "ffn_embeddings",
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
    st.caption(
        t(
            "This model: {shared}. \u00d7\u221ad_model = \u00d7{scale} makes the embeddings about as long as "
            "the positional vectors they are added to.",
            shared=shared,
            scale=f"{ctx.config.d_model**0.5:.1f}",
        )
    )
    return layer, None


# ---- 5 -------------------------------------------------------------------------------------------------


def positional_view(ctx: TourContext) -> tuple[int | None, int | None]:
    n = len(ctx.translation.source_ids)
    table = computed("positions", ctx.selection, ctx.sentence, lambda ck, _tr: numbers.positions_of(ck.model, n), n)
    _figure(
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
    return None, None


# ---- 6 -------------------------------------------------------------------------------------------------


@st.cache_resource
def _timings() -> dict[int, list[dict]]:
    """Layer timings by d, measured on demand and shared by every session of this server."""
    return {}


def why_self_attention_view(ctx: TourContext) -> tuple[int | None, int | None]:
    d, n = ctx.config.d_model, len(ctx.translation.source_ids)
    _figure(tour_training.operations_figure(n, d, lang=ctx.lang), t("Table 1"), "why_self_attention")
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
        bar = st.progress(0.0, text=t("Measuring\u2026"))
        ns = tuple(sorted({16, 32, 64, 128, 2 * d, d}))
        timings[d] = measure_layers(
            ns, d, backward=False, repeats=3, progress=lambda fraction, text: bar.progress(fraction, text=text)
        )
        bar.empty()
    if d in timings:
        show_figure(
            tour_training.measured_figure(timings[d], d, lang=ctx.lang),
            t("Measured layer times"),
            key="tour_measured",
            downloads=False,
        )
    return None, None


# ---- 7 -------------------------------------------------------------------------------------------------


def training_view(ctx: TourContext) -> tuple[int | None, int | None]:
    metadata = ctx.checkpoint.metadata
    schedule = numbers.schedule_for(ctx.config, metadata)
    trained = (metadata.get("training") or {}).get("step") or metadata.get("step")
    _figure(
        tour_training.schedule_figure(
            schedule.steps,
            schedule.rates,
            warmup_steps=schedule.warmup_steps,
            d_model=schedule.d_model,
            trained_steps=trained,
            lang=ctx.lang,
        ),
        t("Learning-rate schedule"),
        "training",
    )
    if not schedule.from_checkpoint:
        st.caption(t("The checkpoint does not record its warm-up; the paper's warmup_steps = 4000 is drawn."))
    position = numbers.middle_position(ctx.translation)
    word = computed(
        "next_word",
        ctx.selection,
        ctx.sentence,
        lambda ck, tr: numbers.next_word(ck.model, ck.tokenizer, tr, position),
        position,
    )
    show_figure(
        tour_training.smoothing_figure(
            word.top_tokens,
            word.top_probs,
            word.word,
            smoothed_target=word.smoothed_target,
            smoothed_other=word.smoothed_other,
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
    return None, None


# ---- 8 -------------------------------------------------------------------------------------------------


def beam_search_view(ctx: TourContext) -> tuple[int | None, int | None]:
    rows = beam_rows(ctx.selection, ctx.sentence)
    _figure(tour_training.beam_figure(rows, lang=ctx.lang), t("Beam search"), "beam_search")
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
    paper = "; ".join(f"{name}: EN-DE {de}, EN-FR {fr}" for name, de, fr in numbers.PAPER_TABLE2)
    st.caption(
        t(
            "Table 2 (WMT 2014 news, newstest2014) \u2014 {paper}. Beside it, {ours}. Different data and "
            "different test sets: the numbers are not comparable.",
            paper=paper,
            ours=ours,
        )
    )
    return None, None


# ---- 9 -------------------------------------------------------------------------------------------------


def variations_view(ctx: TourContext) -> tuple[int | None, int | None]:
    rows = numbers.table3_parameter_rows()
    _figure(tour_training.table3_figure(rows, lang=ctx.lang), t("Table 3"), "variations")
    st.dataframe(
        [
            {
                t("row"): r["row"],
                t("change"): r["change"],
                "PPL": r["ppl"],
                "BLEU": r["bleu"],
                t("params, paper (M)"): r["paper_millions"],
                t("params, engine (M)"): round(r["engine_millions"], 1),
            }
            for r in rows
        ],
        hide_index=True,
    )
    st.caption(
        t(
            "Engine counts use the paper's 37,000-piece shared vocabulary. Rows (A) keep h\u00b7d_k = "
            "d_model, so their parameter count is the base model's."
        )
    )
    variant_runs(ctx.lang)
    return None, None


VARIANT_RUNS = "tour_variant_runs"
LIVE_STATUSES = ("preparing", "running", "stopping")


def variant_runs(lang: str) -> None:
    """Start the tiny row-(A) pair in the background and draw their curves; the page never waits for them."""
    names = st.session_state.get(VARIANT_RUNS)
    if not names:
        st.caption(
            t(
                "Row (A) on this machine: train a tiny model with 8 heads and the same model with one head "
                "(d_k = d_model) side by side, each in its own process, on a toy task. About a minute."
            )
        )
        if st.button(t("Train one head against eight"), key="tour_start_variants", icon=":material/play_arrow:"):
            try:
                st.session_state[VARIANT_RUNS] = start_variants(manager())
            except JobError as error:
                st.warning(t("Not started: {error}", error=error), icon=":material/hourglass:")
                return
            st.rerun()
        return
    live = any(c.status in LIVE_STATUSES for c in variant_curves(manager(), names))

    # Redraws itself every two seconds while the runs train; one full rerun when they end stops the polling.
    @st.fragment(run_every=2.0 if live else None)
    def curves_view() -> None:
        curves = variant_curves(manager(), names)
        show_figure(
            tour_training.variant_figure(curves, lang=lang),
            t("Row (A) on this machine"),
            key="tour_variants_chart",
            downloads=False,
        )
        st.caption(
            t(
                "Both have {parameters} parameters; the runs are also on the Train page.",
                parameters=f"{curves[0].parameters:,}" if curves else "?",
            )
        )
        if live and not any(c.status in LIVE_STATUSES for c in curves):
            st.rerun()

    curves_view()


# ---- 10 ------------------------------------------------------------------------------------------------


def beyond_view(ctx: TourContext) -> tuple[int | None, int | None]:
    slot = st.container()
    layer, head = _layer_and_head(ctx, "tour_mask")
    both = computed(
        "masks", ctx.selection, ctx.sentence, lambda ck, tr: numbers.mask_comparison(ck.model, tr, layer - 1), layer
    )
    with slot:
        _figure(
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


STOP_VIEWS = {
    "architecture": architecture_view,
    "scaled_dot_product": scaled_dot_product_view,
    "multi_head": multi_head_view,
    "ffn_embeddings": ffn_embeddings_view,
    "positional": positional_view,
    "why_self_attention": why_self_attention_view,
    "training": training_view,
    "beam_search": beam_search_view,
    "variations": variations_view,
    "beyond": beyond_view,
}
