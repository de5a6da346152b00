"""Ablation meets beam search: switch heads off and search again; the two search trees side by side, what the beam
pruned or added and how the scores changed, and the BLEU change on a batch (explorer/explain/ablated_beam.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.data.corpus import CorpusError, tsv_from_bytes
from explorer.data.multi30k import load_multi30k, multi30k_available
from explorer.explain.ablated_beam import BleuChange, PrefixChange, ablation_bleu, compare_beams
from explorer.figures.beam_tree import beam_tree_figure
from explorer.model.head_mask import all_head_names
from explorer.tokenizer import Tokenizer
from ui.attention_view import MAX_UPLOAD_BYTES
from ui.beam.tree import trace_pieces
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import main_area_px
from ui.markdown import md_escape
from ui.model_cache import cached
from ui.model_picker import Selection
from ui.urlstate import bound_multiselect, bound_select_slider, bound_toggle

BEAMS = (2, 3, 4, 5, 6, 8)
TEST_PAIRS = 50  # test2016 pairs scored when no file is uploaded
SHOWN_PREFIXES = 12


def _prefix_rows(changes: Sequence[PrefixChange], tokenizer: Tokenizer) -> list[dict[str, Any]]:
    return [
        {
            t("prefix"): tokenizer.decode(list(c.tokens)) or "<s>",
            t("tokens"): len(c.tokens),
            t("score with every head"): None if c.before is None else round(c.before, 3),
            t("score with the heads off"): None if c.after is None else round(c.after, 3),
        }
        for c in changes[:SHOWN_PREFIXES]
    ]


def _batch(upload: Any, checkpoint: Checkpoint) -> tuple[list[str], list[str], str] | None:
    """(sources, references, what they are) of the uploaded TSV, else of the first test2016 pairs; None (with a
    note) when neither is at hand."""
    if upload is not None:
        try:
            corpus = tsv_from_bytes(upload.getvalue(), upload.name, MAX_UPLOAD_BYTES)
        except CorpusError as error:
            st.error(md_escape(str(error)), icon=":material/error:")
            return None
        return list(corpus.source), list(corpus.target), upload.name
    if not multi30k_available():
        st.info(t("Upload a file of source<TAB>reference lines to score."), icon=":material/upload_file:")
        return None
    test = load_multi30k("test2016")
    name = t("the first {n} pairs of Multi30k test2016", n=TEST_PAIRS)
    return list(test.source[:TEST_PAIRS]), list(test.target[:TEST_PAIRS]), name


def _bleu_section(selection: Selection, checkpoint: Checkpoint, heads: list[str], beam: int, alpha: float) -> None:
    st.subheader(t("BLEU on a batch, with and without these heads"))
    upload = st.file_uploader(
        t("A UTF-8 text file, one source<TAB>reference pair per line"), key="x_bleu_file", type=["tsv", "txt"]
    )
    batch = _batch(upload, checkpoint)
    if batch is None:
        return
    sources, references, name = batch
    if not bound_toggle(st, t("Score {name}", name=name), "x_bleu", False):
        return
    bar = st.progress(0.0, text=t("Searching {n} sentences twice…", n=len(sources)))

    def moved(done: int, total: int) -> None:
        bar.progress(done / total)

    def compute(ck: Checkpoint) -> BleuChange:
        return ablation_bleu(
            ck.model, ck.tokenizer, sources, references, heads, beam_size=beam, alpha=alpha, progress=moved
        )

    key = (tuple(sources), tuple(references), tuple(heads), beam, alpha)
    change = cached("explain_ablation_bleu", selection, key, compute)
    bar.empty()
    full, ablated = st.columns(2)
    full.metric(t("BLEU with every head"), f"{change.full.bleu:.2f}")
    ablated.metric(t("BLEU with the heads off"), f"{change.ablated.bleu:.2f}", delta=f"{change.change:+.2f}")
    st.caption(t("sacreBLEU over {n} sentences: {signature}", n=change.full.n_sentences,
                 signature=change.full.bleu_signature))  # fmt: skip


def ablated_beam_section(side: Any, selection: Selection, checkpoint: Checkpoint, sentence: str) -> None:
    """The heads, beam size and α in `side`; the two trees, the pruned and added prefixes, the score changes and
    the BLEU of a batch."""
    config = checkpoint.config
    names = all_head_names(config)
    with side:
        heads = bound_multiselect(
            st, t("Heads switched off"), names, "x_off", [f"cross.{config.n_decoder_layers - 1}.0"],
            help=t("FAMILY.LAYER.HEAD, counted from 0, as on the Heads page and the command line."),
        )  # fmt: skip
        beam = int(bound_select_slider(st, t("Beam size"), BEAMS, "x_beam", 4))
    alpha = 0.6
    if not heads:
        st.info(t("Pick at least one head to switch off."), icon=":material/toggle_off:")
        return
    heads = sorted(heads)
    with st.spinner(t("Searching with every head and with {n} heads off…", n=len(heads))):
        found = cached(
            "explain_ablated_beam",
            selection,
            (sentence, tuple(heads), beam, alpha),
            lambda ck: compare_beams(ck.model, ck.tokenizer, sentence, heads, beam_size=beam, alpha=alpha),
        )
    tokenizer = checkpoint.tokenizer
    lang = current_language()
    width = main_area_px() // 2
    for column, translation, label, key in zip(
        st.columns(2, gap="medium"),
        (found.full, found.ablated),
        (t("Every head"), t("Off: {heads}", heads=", ".join(heads))),
        ("x_tree_full", "x_tree_ablated"),
        strict=True,
    ):
        with column:
            st.markdown(f"**{md_escape(label)}**  \n{md_escape(translation.output)} · {translation.score:.3f}")
            assert translation.trace is not None
            figure = beam_tree_figure(
                translation.trace, trace_pieces(translation.trace, tokenizer), lang=lang, max_height=420,
                width=width, highlight=tuple(translation.output_ids),
            )  # fmt: skip
            show_figure(figure, f"beam {label}", key=key)
    same = found.full.output_ids == found.ablated.output_ids
    st.markdown(
        t(
            "{verdict} Score {before:.3f} → {after:.3f}. The beam with the heads off dropped {dropped} prefixes "
            "the full search kept and kept {added} it did not.",
            verdict=t("The same translation.") if same else t("Another translation."),
            before=found.full.score,
            after=found.ablated.score,
            dropped=len(found.dropped),
            added=len(found.added),
        )
    )
    pruned, added, shared = st.tabs([t("Dropped"), t("Added"), t("Score changes")])
    pruned.dataframe(_prefix_rows(found.dropped, tokenizer), hide_index=True, key="x_dropped")
    added.dataframe(_prefix_rows(found.added, tokenizer), hide_index=True, key="x_added")
    shared.dataframe(_prefix_rows(found.shared, tokenizer), hide_index=True, key="x_shared")
    st.caption(
        t(
            "Scores are log-probability over the length penalty ((5 + length) / 6)^α, α = {alpha}, as the search "
            "ranks them. A prefix is the same in both searches when it holds the same tokens.",
            alpha=alpha,
        )
    )
    _bleu_section(selection, checkpoint, heads, beam, alpha)
