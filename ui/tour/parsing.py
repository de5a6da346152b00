"""Stop 8's section on Section 6.3, English constituency parsing: Table 4, the decoding the paper changed for it
(output length input + 300, beam 21, α 0.3), and the synthetic bracket task decoded under the translation's
settings and the parser's: stored with the app, or live when the tour's model was trained on that task."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from explorer.inference import EXTRA_OUTPUT_TOKENS
from explorer.tour import parsing
from explorer.tour.parsing import Decoded
from ui.attention_view import data_kind
from ui.i18n import t
from ui.model_cache import cached
from ui.tour.context import TourContext


@st.cache_resource
def _stored() -> parsing.StoredParsing | None:
    return parsing.load()


def _decoded_table(decoded: Sequence[Decoded]) -> None:
    st.dataframe(
        [
            {
                t("input"): d.source,
                t("limit"): t("input + {k}", k=d.extra),
                t("beam"): d.beam,
                "\u03b1": d.alpha,
                t("output"): d.output,
                t("tokens"): f"{d.length} / {len(d.reference.split())}",
                t("correct"): "\u2713" if d.correct else "\u2717",
            }
            for d in decoded
        ],
        hide_index=True,
    )


def parsing_section(ctx: TourContext) -> None:
    """Table 4 and the bracket task under the paper's two decoding settings."""
    st.markdown(t("**Section 6.3: English constituency parsing (Table 4)**"))
    st.dataframe(
        [{t("Parser"): r.parser, t("Training data"): t(r.training), "WSJ 23 F1": r.f1} for r in parsing.TABLE4],
        hide_index=True,
    )
    st.caption(
        t(
            "To see whether the model generalises beyond translation, the paper trained a 4-layer model "
            "(d_model = 1024) on the Wall Street Journal part of the Penn Treebank (about 40K sentences), and "
            "semi-supervised on about 17M. A parse is much longer than its sentence, so decoding changed: maximum "
            "output length input + {parser_extra} (translation: input + {extra}), beam {beam} (translation: 4), "
            "\u03b1 = {alpha} (translation: 0.6). Without tuning for the task it beats every earlier model but "
            "the RNN grammar (Dyer et al.).",
            parser_extra=parsing.PARSER_EXTRA,
            extra=EXTRA_OUTPUT_TOKENS,
            beam=parsing.PARSER_BEAM,
            alpha=parsing.PARSER_ALPHA,
        )
    )
    if data_kind(ctx.checkpoint.metadata) == "bracket":
        decoded = cached(
            "tour_parsing",
            ctx.selection,
            ctx.sentence,
            lambda ck: parsing.decode_grid(ck.model, ck.tokenizer, [ctx.sentence]),
        )
        _decoded_table(decoded)
        st.caption(t("The tour's model and sentence, decoded under each setting."))
        return
    stored = _stored()
    if stored is None:
        st.caption(t("No stored bracket-task results: `{command}` makes them.", command=parsing.COMMAND))
        return
    _decoded_table(stored.decoded)
    st.caption(
        t(
            "The synthetic bracket task (Train page: task \u201cbracket\u201d): a tiny model trained {steps} steps "
            "on sequences of {low} to {high} symbols, {exact} of its validation trees exact (greedy); `{command}` "
            "makes it again. A limit of input + {short} cuts every tree (a tree has at least four tokens more than "
            "its input); the last input is longer than any in training.",
            steps=stored.steps,
            low=stored.train_lengths[0],
            high=stored.train_lengths[1],
            exact=f"{stored.val_exact:.0%}",
            command=parsing.COMMAND,
            short=parsing.SHORT_EXTRA,
        )
    )
