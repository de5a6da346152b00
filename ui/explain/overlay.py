"""A head's argmax links drawn over the reference alignment of a Multi30k test2016 pair (the project's IBM Model 1
reference, explorer/explain/data/), on the head's word-level cross-attention, raw or value-weighted: the picture
behind the AER numbers, for the Translate view and the Heads page."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.data.multi30k import load_multi30k, multi30k_available
from explorer.explain.alignment import Links, aer
from explorer.explain.head_alignment import MULTI30K_TEST2016, SentenceAlignment, align_sentence, read_reference
from explorer.figures.explain import alignment_overlay
from ui.attention_controls import number_picker
from ui.attention_view import data_kind
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import fit_height
from ui.model_cache import cached
from ui.model_picker import Selection
from ui.urlstate import bound_toggle

PICKED = 200  # the first test2016 pairs offered in the picker


@lru_cache(maxsize=1)
def test2016_pairs() -> tuple[tuple[str, str, tuple[Links, Links]], ...]:
    """(English, German, (sure, possible)) of every test2016 pair: the files and the reference, read once."""
    test = load_multi30k("test2016")
    references = read_reference(MULTI30K_TEST2016)
    return tuple(zip(test.source, test.target, references, strict=True))


def overlay_available(checkpoint: Checkpoint) -> bool:
    """An English→German model and the Multi30k test set at hand (the reference is for that pair of languages)."""
    return data_kind(checkpoint.metadata) == "natural" and multi30k_available()


def _aligned(selection: Selection, index: int) -> SentenceAlignment | None:
    source, target, reference = test2016_pairs()[index]
    return cached(
        "explain_overlay",
        selection,
        index,
        lambda ck: align_sentence(ck.model, ck.tokenizer, source, target, reference),
    )


def overlay_section(
    selection: Selection,
    checkpoint: Checkpoint,
    *,
    prefix: str,
    weighting: str,
    sentence: str | None = None,
    head: tuple[int, int] | None = None,
) -> None:
    """The pair picker (the test2016 pair whose English is `sentence` when there is one), the layer and head
    (1-based defaults `head`, else the last layer's first head) and the shift, then the figure. Widget keys start
    with `prefix`; weighting: a key of ui.attention_controls.WEIGHTINGS."""
    pairs = test2016_pairs()
    typed = next((i for i, (source, _, _) in enumerate(pairs) if source.strip() == (sentence or "").strip()), None)
    offered = sorted({*range(min(PICKED, len(pairs))), *([typed] if typed is not None else [])})
    config = checkpoint.config
    layer_default, head_default = head or (config.n_decoder_layers, 1)
    left, right = st.columns((2, 1), gap="medium")
    with left:
        index = st.selectbox(
            t("Multi30k test2016 pair"),
            offered,
            index=offered.index(typed) if typed is not None else 0,
            key=f"{prefix}_pair",
            format_func=lambda i: f"{i + 1}: {pairs[i][0][:80]}",
            help=t(
                "The reference alignment exists for the test set's pairs: the attention is read with the reference "
                "German fed to the decoder, as the AER is."
            ),
        )
        shifted = bound_toggle(
            st,
            t("Shift by one word"),
            f"{prefix}_shift",
            False,
            help=t("Read each German word's link from the row after it: attention often looks one word ahead."),
        )
    with right:
        layer = number_picker("Layer", f"{prefix}_layer", config.n_decoder_layers, default=layer_default)
        chosen = number_picker("Head", f"{prefix}_head", config.n_heads, default=head_default)
    with st.spinner(t("Reading the pair through every cross-attention head…")):
        aligned = _aligned(selection, int(index or 0))
    if aligned is None:
        st.info(t("The model's pieces of this pair do not make the reference's words; pick another pair."))
        return
    weighted = weighting == "value_weighted"
    links = aligned.head_links(layer - 1, chosen - 1, shift=int(shifted), weighted=weighted)
    weights = (aligned.value_weighted if weighted else aligned.raw)[layer - 1, chosen - 1]
    lang = current_language()
    kind = t("value-weighted") if weighted else t("raw weights")
    title = t("cross.{layer}.{head} ({kind}) over the reference", layer=layer - 1, head=chosen - 1, kind=kind)
    figure = alignment_overlay(
        weights, aligned.source_words, aligned.target_words, (aligned.sure, aligned.possible), links,
        title=title, lang=lang,
    )  # fmt: skip
    show_figure(fit_height(figure, width=900), f"alignment overlay cross {layer} {chosen}", key=f"{prefix}_overlay")
    st.caption(
        t(
            "Squares: the reference's sure links, circles: its possible ones (IBM Model 1 on the training set, "
            "explorer/explain/data). Crosses: the German word's strongest English word for this head. AER of this "
            "head on this pair: {aer:.2f} (0: every link right).",
            aer=aer(links, aligned.sure, aligned.possible),
        )
    )
