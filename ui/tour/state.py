"""The tour's session state: the stop (bound to ?stop=), the sentence, the guesses (?ex=), and the cached
per-stop numbers. Computations run once per (checkpoint, device, version, sentence, options) for every session."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.inference import Translation
from explorer.tour import exercises, numbers
from ui.beam.example import beam_sentence
from ui.model_cache import cached, translate_for
from ui.model_picker import Selection
from ui.tour.guesses import decode_guesses, encode_guesses

T = TypeVar("T")

STOP_KEY, SENTENCE_KEY, GUESSES_KEY, URL_GUESSES = "stop", "tour_sentence", "tour_guesses", "ex"


def tour_translation(selection: Selection, sentence: str) -> Translation:
    """The tour's sentence, translated greedily with attention (the same result the translate page caches)."""
    return translate_for(selection, [sentence], with_attention=True)[0]


def computed(
    kind: str,
    selection: Selection,
    sentence: str,
    compute: Callable[[Checkpoint, Translation], T],
    *options: object,
) -> T:
    """`compute(checkpoint, translation)` cached under the tour's kind, the sentence and `options`."""
    translation = tour_translation(selection, sentence)
    return cached(f"tour_{kind}", selection, (sentence, options), lambda ck: compute(ck, translation))


def beam_rows(
    selection: Selection,
    sentence: str,
    beams: tuple[int, ...] = numbers.BEAMS,
    alphas: tuple[float, ...] = numbers.ALPHAS,
) -> list[numbers.BeamRow]:
    """Stop 8's grid of beam searches (every beam width at every α, or the ones asked for)."""
    return computed(
        "beam",
        selection,
        sentence,
        lambda ck, _t: numbers.beam_grid(ck.model, ck.tokenizer, sentence, beams, alphas),
        beams,
        alphas,
    )


def label_smoothing(checkpoint: Checkpoint) -> float:
    """The ε_ls the checkpoint was trained with; the paper's where it does not record one."""
    recorded = numbers.label_smoothing_of(checkpoint.metadata)
    return numbers.PAPER_LABEL_SMOOTHING if recorded is None else recorded


def tour_exercises(selection: Selection, sentence: str, lang: str) -> list[exercises.Exercise]:
    """Every exercise for this model and sentence; `lang` words their computed sentences."""
    # The Beam page's sentence (beam and greedy differ on it). Stop 8's question reads two searches of its grid:
    # only those run here, on every stop's first visit; the whole grid (12 searches: 0.5 s on an idle 2-core
    # machine, about 2 s in a fresh server's first run while it still imports) when stop 8 is shown.
    beams, alpha = (1, exercises.BEAM_CHANGES_BEAM), exercises.BEAM_CHANGES_ALPHA
    rows = beam_rows(selection, beam_sentence(selection), beams, (alpha,))
    return computed(
        "exercises",
        selection,
        sentence,
        lambda ck, tr: exercises.build_exercises(
            ck.model, ck.tokenizer, tr, rows, epsilon=label_smoothing(ck), lang=lang
        ),
        lang,
    )


def revealed(key: str) -> bool:
    """Whether exercise `key` has a committed guess: until then, a stop hides what would give its answer away."""
    return key in st.session_state.get(GUESSES_KEY, {})


def guesses(all_exercises: list[exercises.Exercise]) -> dict[str, str | float]:
    """This session's committed guesses, seeded once from ?ex= (only guesses valid for these exercises)."""
    if GUESSES_KEY not in st.session_state:
        by_key = {e.key: e for e in all_exercises}
        seeded: dict[str, str | float] = {}
        for key, raw in decode_guesses(st.query_params.get(URL_GUESSES)).items():
            guess = by_key[key].parse_guess(raw) if key in by_key else None
            if guess is not None:
                seeded[key] = guess
        st.session_state[GUESSES_KEY] = seeded
    committed: dict[str, str | float] = st.session_state[GUESSES_KEY]
    return committed


def record_guess(key: str, guess: str | float | None) -> None:
    """Commit (or, with None, withdraw) a guess, and keep the URL in step for a lecturer's link."""
    stored = dict(st.session_state.get(GUESSES_KEY, {}))
    if guess is None:
        stored.pop(key, None)
    else:
        stored[key] = guess
    st.session_state[GUESSES_KEY] = stored
    if stored:
        st.query_params[URL_GUESSES] = encode_guesses(stored)
    else:
        st.query_params.pop(URL_GUESSES, None)


def go_to(number: int) -> None:
    """Button callback: move to stop `number` (the pagination widget, bound to ?stop=, follows)."""
    st.session_state[STOP_KEY] = number
