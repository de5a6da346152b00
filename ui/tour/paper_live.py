"""What the paper tells in words, beside the tour's figures: the decoder's auto-regressive reading of its own
output shifted right (Figure 1), the FFN as two kernel-1 convolutions (Section 3.3), Adam and dropout
(Sections 5.3-5.4), checkpoint averaging (6.1), Table 2 in full with its training-cost column, and Table 3's
row (A) as attention (one head against eight, stored with the app)."""

from __future__ import annotations

import streamlit as st

from explorer.analysis.ffn_conv import conv_equivalence
from explorer.figures.paper_live import heads_against_one_figure
from explorer.paper import (
    BIG_EN_FR_IN_TEXT,
    GPU_FLOPS,
    PAPER_GPUS,
    PAPER_TRAINING_S,
    TABLE2,
    training_flops,
)
from explorer.tour import row_a_attention
from explorer.tour.recipe import (
    MODERN_GPU_FLOPS,
    adam_of,
    averaging_note,
    base_model_here_text,
    measured_cost,
    optimizer_and_dropout,
    power_text,
)
from ui.figures import show_figure
from ui.i18n import t
from ui.model_cache import cached
from ui.tour.context import TourContext
from ui.train.estimate import this_machine_flops


def decoder_words() -> None:
    """Figure 1's "Outputs (shifted right)" and Section 3's "auto-regressive", said where the figure is."""
    st.caption(
        t(
            "The decoder is **auto-regressive** (Section 3): it makes one token at a time and reads the tokens it "
            "has made so far. Its input is the output **shifted right** by one position, <s> first (Figure 1: "
            "\u201cOutputs (shifted right)\u201d), so position i predicts token i from the tokens before it."
        )
    )


def averaging_caption(ctx: TourContext) -> None:
    st.caption(averaging_note(ctx.checkpoint.metadata, ctx.lang))


def conv_caption(ctx: TourContext) -> None:
    """Section 3.3's "two convolutions with kernel size 1", checked on the loaded model and the tour's sentence."""
    check = cached(
        "ffn_conv", ctx.selection, ctx.sentence, lambda ck: conv_equivalence(ck.model, ck.tokenizer, ctx.sentence)
    )
    st.caption(
        t(
            "Section 3.3 also calls the FFN \u201ctwo convolutions with kernel size 1\u201d. Checked here: every "
            "encoder layer's FFN on this sentence's {n} positions, as linear layers and as conv1d with kernel "
            "size 1 and the same weights, differs by at most {difference} (outputs up to {largest}).",
            n=check.positions,
            difference=f"{check.max_abs_difference:.1e}",
            largest=f"{check.max_abs_output:.1f}",
        )
    )


def optimizer_caption(ctx: TourContext) -> None:
    st.caption(optimizer_and_dropout(adam_of(ctx.checkpoint.metadata), ctx.config.dropout, ctx.lang))


def _bleu(value: float | None) -> str:
    return "\u2014" if value is None else f"{value:g}"


def _cost(value: float | None) -> str:
    return "\u2014" if value is None else power_text(value)


def table2_section(ctx: TourContext) -> None:
    """Table 2 as the paper prints it, its cost method, this model's cost measured the same way, the base model
    on this machine, and the 41.8 / 41.0 note."""
    st.markdown(t("**Table 2** (newstest2014): BLEU and training cost"))
    st.dataframe(
        [
            {
                t("Model"): r.model,
                "BLEU EN-DE": _bleu(r.bleu_en_de),
                "BLEU EN-FR": _bleu(r.bleu_en_fr),
                t("FLOPs EN-DE"): _cost(r.flops_en_de),
                t("FLOPs EN-FR"): _cost(r.flops_en_fr),
            }
            for r in TABLE2
        ],
        hide_index=True,
    )
    base, big = (
        training_flops(PAPER_TRAINING_S[model], PAPER_GPUS, GPU_FLOPS["P100"])
        for model in ("Transformer (base model)", "Transformer (big)")
    )
    st.caption(
        t(
            "Section 6.1 and footnote 5: training FLOPs = training time \u00d7 number of GPUs \u00d7 sustained "
            "single-precision throughput per GPU ({gpus} TFLOPS). Base: 12 hours on 8 P100 = {base}; big: "
            "3.5 days on 8 P100 = {big}. EN-FR, big: this table prints 41.8; Section 6.1's text (and the first "
            "version's Table 2) says {text}.",
            gpus=", ".join(f"{name} {flops / 1e12:.1f}" for name, flops in GPU_FLOPS.items()),
            base=power_text(base),
            big=power_text(big),
            text=f"{BIG_EN_FR_IN_TEXT:.1f}",
        )
    )
    cost = measured_cost(ctx.checkpoint.metadata)
    if cost is None:
        st.caption(t("This checkpoint records no training time, so its cost cannot be estimated."))
    elif cost.device == "cpu":
        flops = cost.flops(this_machine_flops())
        st.caption(
            t(
                "This model: {seconds} s of training on the CPU, at this machine's measured {gflops} GFLOP/s: "
                "about {flops} FLOPs.",
                seconds=f"{cost.seconds:,.0f}",
                gflops=f"{this_machine_flops() / 1e9:,.0f}",
                flops=power_text(flops),
            )
        )
    else:
        throughputs = {**MODERN_GPU_FLOPS, **GPU_FLOPS}
        gpu = st.selectbox(
            t("GPU that trained this model"),
            list(throughputs),
            key="tour_cost_gpu",
            format_func=lambda name: f"{name} ({throughputs[name] / 1e12:g} TFLOPS)",
            help=t("The checkpoint records the device kind ({device}), not the GPU's name.", device=cost.device),
        )
        assert gpu is not None, "a selectbox with options always has a value"
        flops = cost.flops(throughputs[gpu])
        st.caption(
            t(
                "This model, measured the paper's way: {seconds} s of training ({steps} steps) on {devices} "
                "\u00d7 {device}, as its config.json records \u00d7 {tflops} TFLOPS = {flops} FLOPs, about "
                "1/{ratio} of the base model's cost. Its BLEU is on Multi30k, not newstest2014: not a row of "
                "this table.",
                seconds=f"{cost.seconds:,.0f}",
                steps=f"{cost.steps:,}" if cost.steps else "?",
                devices=cost.devices,
                device=cost.device,
                tflops=f"{throughputs[gpu] / 1e12:g}",
                flops=power_text(flops),
                ratio=f"{base / flops:,.0f}",
            )
        )
    st.caption(base_model_here_text(this_machine_flops(), ctx.lang))


@st.cache_resource
def _stored_row_a() -> row_a_attention.RowAAttention | None:
    return row_a_attention.load()


def row_a_attention_view(lang: str) -> None:
    """The stored row-(A) pair's attention on one held-out sentence: one head beside eight and their mean."""
    record = _stored_row_a()
    if record is None:
        st.caption(t("No stored row-(A) attention: `{command}` makes it.", command=row_a_attention.COMMAND))
        return
    many, one = record.runs
    show_figure(
        heads_against_one_figure(many.cross, one.cross, (record.target_pieces, record.source_pieces), lang=lang),
        t("Row (A) as attention"),
        key="tour_row_a_attention",
        downloads=False,
    )
    st.caption(
        t(
            "Trained on a CPU and stored with the app ({steps} steps each on the reverse task; "
            "`{command}` makes it again); the top decoder layer's encoder-decoder attention. {many} heads "
            "(d_k = {many_dk}): validation loss {many_loss}, output "
            "\u201c{many_output}\u201d. 1 head (d_k = {one_dk}): validation loss {one_loss}, output "
            "\u201c{one_output}\u201d. Source \u201c{source}\u201d. The paper's row (A): h = 1 is 0.9 BLEU "
            "below h = 8 (24.9 against 25.8). Section 3.2.2: one head must average over the places it attends "
            "to; several heads can each take one.",
            steps=record.steps,
            command=row_a_attention.COMMAND,
            many=many.n_heads,
            many_dk=many.d_k,
            many_loss=f"{many.val_loss:.3f}",
            many_output=many.output,
            one_dk=one.d_k,
            one_loss=f"{one.val_loss:.3f}",
            one_output=one.output,
            source=record.source,
        )
    )
