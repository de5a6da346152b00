"""Predict, then reveal: a cross-attention head looks at "." while the model produces a word; which source token
is it really taking information from? The guess first, then the value-weighted attention of that head and the
attribution of that word (explorer/explain/exercise.py)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.explain.exercise import DotHead, dot_head
from explorer.figures.explain import attribution_bars
from explorer.inference import Translation
from explorer.text.pieces import shown_pieces
from ui.explain.compute import attribution_for, explained_for
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.model_picker import Selection

STEPS = 32  # integration steps of the reveal's attribution


def _question(found: DotHead, source: list[str], outputs: list[str]) -> None:
    st.markdown(
        t(
            "While the model writes “{token}”, head **cross.{layer}.{head}** (layer {l1}, head {h1}) puts "
            "**{weight:.0%}** of its attention on “{key}”. A weight is where the head looks. **Which source token is "
            "this head really taking information from?**",
            token=outputs[found.position],
            layer=found.layer,
            head=found.head,
            l1=found.layer + 1,
            h1=found.head + 1,
            weight=float(found.raw[found.key]),
            key=source[found.key],
        )
    )


def exercise_section(selection: Selection, translation: Translation) -> None:
    """The question, a guess among the source tokens, then (once guessed) the reveal: the head's raw and
    value-weighted rows and the word's integrated gradients, and what they say."""
    with st.spinner(t("Computing the value-weighted attention of every head…")):
        explained = explained_for(selection, translation)
    found = dot_head(explained, translation.source_pieces)
    if found is None:
        st.info(t("This sentence has no punctuation and no </s> to look at; try one that ends with a full stop."))
        return
    source = shown_pieces(translation.source_pieces)
    outputs = shown_pieces(translation.target_output_pieces)
    _question(found, source, outputs)
    if st.session_state.get("x_guess") is not None and st.session_state["x_guess"] >= len(source):
        st.session_state["x_guess"] = None  # another sentence with fewer source tokens
    guess = st.pills(
        t("Your guess"),
        range(len(source)),
        key="x_guess",
        format_func=lambda j: f"{j}: {source[j]}",  # unique labels: pills match by label
        help=t("Pick one token; the answer shows once you have guessed."),
    )
    if guess is None:
        st.caption(t("Guess first: the answer, and the evidence for it, appear below once you pick a token."))
        return
    with st.spinner(t("Attributing “{token}” with integrated gradients ({n} steps)…", token=outputs[found.position],
                      n=STEPS)):  # fmt: skip
        report = attribution_for(selection, translation, found.position, STEPS)
    ig = report.attributions[0].integrated_gradients
    series = {
        t("raw weights of this head"): found.raw,
        t("value-weighted, this head"): found.weighted,
        t("integrated gradients"): ig,
    }
    title = t("Where cross.{layer}.{head} looks, what it moves, what “{token}” owes", layer=found.layer,
              head=found.head, token=outputs[found.position])  # fmt: skip
    show_figure(attribution_bars(source, series, title=title, lang=current_language()), "exercise", key="x_reveal")
    moved, owed = found.moved_from, int(np.argmax(np.abs(ig)))
    verdict = t("Right: the head moves most from your token.") if guess == moved else t("Not this time.")
    st.markdown(
        t(
            "{verdict} The head moves most from “{moved}” ({moved_share:.0%} of what it moves; “{key}” gives "
            "{key_share:.0%}). Integrated gradients say “{token}” owes most to “{owed}”.",
            verdict=verdict,
            moved=source[moved],
            moved_share=float(found.weighted[moved]),
            key=source[found.key],
            key_share=float(found.weighted[found.key]),
            token=outputs[found.position],
            owed=source[owed],
        )
    )
    st.caption(
        t(
            "A large weight on “.” or </s> often moves little: the value vector there is short, so α · ‖f(x)‖ is "
            "small (Kobayashi et al., 2020). Attribution asks a different question, about the whole model: which "
            "source tokens change the word's log-probability. When what the head moves and the attribution point at "
            "one token while the weights point at “.”, the weights alone were the misleading view."
        )
    )
