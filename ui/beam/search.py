"""Beam's search: the settings (sentence, k, α, maximum length) in the sidebar, the beam search beside greedy
decoding, and which of the two ranks higher by the score the search uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.decoding.hypotheses import BeamTrace
from explorer.decoding.policy import normalized_score
from explorer.inference import EXTRA_OUTPUT_TOKENS, Translation
from ui.attention_controls import sentence_input, show_translation
from ui.attention_view import checkpoint_examples
from ui.i18n import t
from ui.model_cache import translate_for
from ui.model_picker import Selection
from ui.urlstate import bound_slider

PICKED_NODE = "beam_picked_node"  # node id clicked in the tree; None: follow the n-best selectbox


def forget_tree_click() -> None:
    """on_change of every control that starts another search or picks a hypothesis: the n-best pick wins."""
    st.session_state[PICKED_NODE] = None


@dataclass(frozen=True)
class SearchChoice:
    sentence: str
    beam_size: int
    alpha: float
    extra: int  # output tokens beyond the input's length
    form: str = "gnmt"  # the model's length normalisation (explorer.decoding.policy.length_penalty)


def search_controls(side: Any, checkpoint: Checkpoint, default: str) -> SearchChoice | None:
    """The sentence (`default` until one is typed) and the search's settings in `side`, each kept in the URL;
    None (with a hint) while the sentence is empty."""
    # The checkpoint's own examples, the one the page opens on first: a click brings the lecture's sentence back.
    own = checkpoint_examples(checkpoint.path, checkpoint.metadata).sentences
    offered = {**checkpoint.metadata, "examples": list(dict.fromkeys((default, *own)))}
    with side:
        sentence = sentence_input("beam_sentence", offered, default=default)
    # The paper's k = 4, α = 0.6 (Section 6.1), whatever the model recommends (Translate opens on that): the
    # page is the paper's search, and on the shipped model these show where beam and greedy differ.
    beam_size = bound_slider(side, t("Beam size k"), "beam_k", 1, 10, 4, on_change=forget_tree_click)
    alpha = bound_slider(
        side,
        t("Length penalty α"),
        "beam_alpha",
        0.0,
        2.0,
        0.6,
        step=0.1,
        on_change=forget_tree_click,
        help=t("0: no normalisation (favours short outputs)."),
    )
    extra = bound_slider(
        side,
        t("Maximum length: input length +"),
        "beam_extra",
        1,
        200,
        EXTRA_OUTPUT_TOKENS,
        on_change=forget_tree_click,
        help=t(
            "Tokens beyond the input's length; also capped by the model's {max_len} positions.",
            max_len=checkpoint.config.max_len,
        ),
    )
    if not sentence:
        st.info(t("Type a sentence to run the search."))
        return None
    form = checkpoint.config.length_normalisation
    return SearchChoice(sentence, int(beam_size), float(alpha), int(extra), form)


@dataclass(frozen=True)
class Searched:
    """One search on screen: the beam's result (with its n-best list and trace) and greedy's, for comparison."""

    choice: SearchChoice
    beam: Translation
    greedy: Translation
    key: tuple[Any, ...]  # names this search: a node clicked in the tree belongs to it (ids restart in every search)

    @property
    def trace(self) -> BeamTrace:
        assert self.beam.trace is not None, "translate(with_trace=True) returns the trace"
        return self.beam.trace


def search_section(selection: Selection, choice: SearchChoice) -> Searched:
    """Beam search and greedy decoding of the sentence (shown by `outputs_section`, under the tree)."""
    options: dict[str, Any] = dict(alpha=choice.alpha, with_attention=False, max_extra_tokens=choice.extra)
    sentence = [choice.sentence]
    beam = translate_for(
        selection, sentence, beam_size=choice.beam_size, with_trace=True, n_best=choice.beam_size, **options
    )[0]
    greedy = translate_for(selection, sentence, beam_size=1, **options)[0]
    key = (selection.path, selection.version, choice.sentence, choice.beam_size, choice.alpha, choice.extra)
    return Searched(choice, beam, greedy, key)


def outputs_section(searched: Searched, max_len: int) -> None:
    """The two outputs side by side. Under the tree, not above it: the tree is the page's figure and must start
    on the first screen at 1280x720, and the outputs read as the tree's result."""
    choice = searched.choice
    left, right = st.columns(2)
    with left:
        how = t("beam search, k = {k}, α = {alpha:g}", k=choice.beam_size, alpha=choice.alpha)
        show_translation(searched.beam, max_len, how=how)
    with right:
        show_translation(searched.greedy, max_len, how=t("greedy search (k = 1), for comparison"))


def verdict(searched: Searched) -> None:
    """Whether beam search found greedy's output, a better one, or lost greedy's path: by the α-normalised score
    the search ranks finished hypotheses with, at the α on screen (greedy's own search ignores α)."""
    beam, greedy, alpha = searched.beam, searched.greedy, searched.choice.alpha
    greedy_score = normalized_score(greedy.log_prob, len(greedy.output_ids), alpha, searched.choice.form)
    numbers = t(
        "score at α = {alpha:g}: beam {beam:.3f}, greedy {greedy:.3f} (log-probability: beam {beam_lp:.3f}, "
        "greedy {greedy_lp:.3f})",
        alpha=alpha,
        beam=beam.score,
        greedy=greedy_score,
        beam_lp=beam.log_prob,
        greedy_lp=greedy.log_prob,
    )
    if beam.output_ids == greedy.output_ids:
        st.caption(t("Here beam search finds the same output as greedy decoding; {numbers}.", numbers=numbers))
    elif beam.score >= greedy_score:
        st.caption(
            t(
                "Beam search found a different output that ranks higher by the score the search uses; {numbers}.",
                numbers=numbers,
            )
        )
    else:
        st.caption(
            t(
                "Greedy's output ranks higher by the score the search uses: beam search pruned its path early; "
                "{numbers}.",
                numbers=numbers,
            )
        )


# The score's formula as the page header shows it, by the model's length normalisation.
_PENALTIES = {
    "gnmt": r"lp(Y) = \left(\frac{5 + |Y|}{6}\right)^{\alpha}",
    "power": r"lp(Y) = |Y|^{\alpha}",
}


def score_formula(form: str) -> str:
    """score(Y) = log P(Y | X) / lp(Y), with lp in `form` ("gnmt", the paper's; "power", Marian's)."""
    return r"\mathrm{score}(Y) = \frac{\log P(Y \mid X)}{lp(Y)}, \qquad " + _PENALTIES[form]
