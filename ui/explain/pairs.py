"""Minimal pairs: two sentences that differ in one word, their translations, and the heads whose attention
changes most, each one click from its two heatmaps (explorer/explain/minimal_pairs.py)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.explain.minimal_pairs import PREPARED_PAIRS, HeadChange, head_changes
from explorer.figures.compare import Panel, compare_heads
from explorer.figures.explain import head_change_bars
from explorer.paper import FAMILY_SHORT
from ui.attention_controls import MAX_SENTENCE_CHARS, show_translation
from ui.attention_view import attention_view
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import fit_height
from ui.model_cache import translate_for
from ui.model_picker import Selection
from ui.urlstate import bound_text

SHOWN_HEADS = 10  # the most changed heads drawn as bars; the picker offers every head


def _head_label(change: HeadChange) -> str:
    """'Cross · layer 2 · head 1' (1-based, as the page's figures count)."""
    return f"{t(FAMILY_SHORT[change.family])} · {t('layer')} {change.layer + 1} · {t('head')} {change.head + 1}"


def _kind_label(kind: str) -> str:
    """A prepared pair's kind in this run's language; literal calls, so the catalogue check sees them."""
    labels = {
        "Number": t("Number"),
        "Gender": t("Gender"),
        "What “it” refers to": t("What “it” refers to"),
        "Word order": t("Word order"),
    }
    return labels.get(kind, kind)


def _use_pair() -> None:
    """A prepared pair picked: its two sentences go into the boxes."""
    index = st.session_state.get("x_pair")
    if index is not None:
        pair = PREPARED_PAIRS[index]
        st.session_state["x_first"], st.session_state["x_second"] = pair.first, pair.second


def pairs_section(side: Any, selection: Selection, checkpoint: Checkpoint) -> None:
    """The prepared pairs, the two sentence boxes, both translations, the ranked heads and the chosen head's two
    heatmaps on one colour scale."""
    kinds = [_kind_label(pair.kind) for pair in PREPARED_PAIRS]  # translated now: choice_list's note
    with side:
        st.selectbox(
            t("Prepared pair"),
            range(len(PREPARED_PAIRS)),
            index=None,
            key="x_pair",
            on_change=_use_pair,
            format_func=kinds.__getitem__,
            placeholder=t("Number, gender, “it”, word order…"),
            help=t("Pairs in the shipped model's domain (image captions) that differ in one word or in word order."),
        )
    left, right = st.columns(2, gap="large")
    with left:
        first = bound_text(st, t("First sentence"), "x_first", MAX_SENTENCE_CHARS, PREPARED_PAIRS[0].first).strip()
    with right:
        second = bound_text(st, t("Second sentence"), "x_second", MAX_SENTENCE_CHARS, PREPARED_PAIRS[0].second).strip()
    if not first or not second:
        st.info(t("Type both sentences, or pick a prepared pair."), icon=":material/keyboard:")
        return
    translations = translate_for(selection, [first, second], with_attention=True)
    for column, translation, n in zip(st.columns(2, gap="large"), translations, (1, 2), strict=True):
        with column:
            show_translation(translation, checkpoint.config.max_len, how=t("sentence {n}, greedy decoding", n=n))
    changes = head_changes(*translations)
    lang = current_language()
    top = changes[:SHOWN_HEADS]
    bars = head_change_bars(
        [_head_label(c) for c in top], [c.distance for c in top], title=t("Heads that change most"), lang=lang
    )
    show_figure(bars, "minimal pair heads", key="explain_pair_bars")
    st.caption(
        t(
            "Per head: the mean over query tokens of the total variation distance between the two sentences' "
            "attention rows, on the tokens both share (each stretch that differs counts as one token). 0: the same "
            "pattern; 1: nothing in common."
        )
    )
    if "x_pair_head" in st.session_state and st.session_state["x_pair_head"] >= len(changes):
        st.session_state["x_pair_head"] = 0
    labels = [f"{_head_label(c)} · {c.distance:.3f}" for c in changes]
    chosen = st.selectbox(t("Heatmaps of"), range(len(changes)), key="x_pair_head", format_func=labels.__getitem__)
    change = changes[int(chosen or 0)]
    panels = []
    for n, translation in enumerate(translations, start=1):
        view = attention_view(translation, change.family, "pieces", lang)
        weights = view.weights[change.layer, change.head]
        title = t("Sentence {n}: ", n=n) + _head_label(change)
        panels.append(Panel(weights, view.query_labels, view.key_labels, title, view.query_title, view.key_title))
    figure = compare_heads(panels, zmax=1.0, lang=lang)
    show_figure(fit_height(figure, width=900), f"minimal pair {change.name}", key="explain_pair_heads")
