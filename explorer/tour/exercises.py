"""Predict-then-reveal exercises of the tour: each question and its answer computed from the loaded model.

An `Exercise` is plain data: the question (English msgid + fields), the kind of guess (a choice among
options, or a number within a tolerance), the answer and the explanation. `build_exercises` makes one or more
per stop from 2 to 9 for a model and a translation; the page only asks, stores the guess, and reveals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer import claims
from explorer.figures.tour_embeddings import ACTIVATION_NAMES
from explorer.inference import Translation
from explorer.model import Transformer
from explorer.paper import TABLE3
from explorer.text.pieces import shown_piece
from explorer.tokenizer import Tokenizer
from explorer.tour import numbers
from explorer.tour.numbers import BeamRow

CHOICE, NUMBER = "choice", "number"


@dataclass(frozen=True)
class Exercise:
    key: str  # stable id, used in the URL (?ex=key:guess)
    stop: int
    question: str  # English msgid with {fields}
    kind: str  # CHOICE or NUMBER
    answer: str | float
    explanation: str  # English msgid with {fields}; shown only after a guess
    fields: dict[str, Any] = field(default_factory=dict)  # fill both question and explanation
    options: tuple[str, ...] = ()  # CHOICE: the options shown (the answer is one of them)
    low: float = 0.0  # NUMBER: the range of the guess widget
    high: float = 1.0
    step: float = 0.01
    tolerance: float = 0.0  # NUMBER: |guess − answer| <= tolerance counts as right
    relative: bool = False  # tolerance is a fraction of the answer

    def __post_init__(self) -> None:
        assert self.kind in (CHOICE, NUMBER), f"kind must be {CHOICE!r} or {NUMBER!r}, got {self.kind!r}"
        if self.kind == CHOICE:
            assert self.answer in self.options, f"{self.key}: answer {self.answer!r} is not among {self.options}"

    def is_correct(self, guess: str | float) -> bool:
        if self.kind == CHOICE:
            return str(guess) == self.answer
        allowed = self.tolerance * abs(float(self.answer)) if self.relative else self.tolerance
        return abs(float(guess) - float(self.answer)) <= allowed + 1e-9

    def parse_guess(self, raw: str) -> str | float | None:
        """A guess from the URL, or None when it is not a valid guess for this exercise."""
        if self.kind == CHOICE:
            return raw if raw in self.options else None
        try:
            value = float(raw)
        except ValueError:
            return None
        return value if self.low <= value <= self.high else None


def shown_place(layer: int, head: int, **fields: object) -> dict[str, object]:
    """An exercise's text fields with the layer and head counted from 1, as the pages show them."""
    return {"layer": layer + 1, "head": head + 1, **fields}


def softmax_without_scaling(model: Transformer, translation: Translation, layer: int = 0, head: int = 0) -> Exercise:
    """Stop 2: the largest weight of one query row once the ÷√d_k is removed."""
    scaled = numbers.scaled_head(model, translation, layer, head)
    peaks = scaled.scaled_weights.max(axis=-1)
    row = int(np.argmin(peaks))  # the most spread-out row: the change is largest there
    answer = round(float(scaled.unscaled_weights[row].max()), 2)
    return Exercise(
        "sqrt_dk",
        2,
        "Encoder layer {layer}, head {head}, query \u201c{query}\u201d: with \u00f7\u221ad_k its largest weight is "
        "{scaled}. Without the division, what will the largest weight be?",
        NUMBER,
        answer,
        "Without \u00f7\u221ad_k every score is {factor} times larger, so the softmax is sharper: the largest "
        "weight goes from {scaled} to {answer} and the row entropy from {entropy_scaled} to {entropy_unscaled} "
        "nats. The larger d_k, the worse: when the components of q and k are independent with mean 0 and "
        "variance 1, q\u00b7k has variance d_k.",
        shown_place(
            layer,
            head,
            query=shown_piece(scaled.tokens[row]),
            scaled=f"{peaks[row]:.2f}",
            answer=f"{answer:.2f}",
            factor=f"{scaled.d_k**0.5:.1f}",
            entropy_scaled=f"{scaled.entropy(scaled.scaled_weights)[row]:.2f}",
            entropy_unscaled=f"{scaled.entropy(scaled.unscaled_weights)[row]:.2f}",
        ),
        tolerance=0.1,
    )


def cross_attention_target(
    translation: Translation, layer: int | None = None, head: int = 0, row: int | None = None
) -> Exercise:
    """Stop 3: which source token one head of encoder-decoder attention looks at for one output token (`row`
    of the target, 0-based; by default the row where the head is most confident)."""
    assert translation.attention is not None, "translate with with_attention=True for this exercise"
    cross = translation.attention.cross  # (layers, heads, tgt, src)
    layer = cross.shape[0] - 1 if layer is None else layer
    row = numbers.strongest_cross_row(cross, layer, head) if row is None else row
    weights = cross[layer, head, row]
    source = list(translation.source_pieces)
    options = tuple(dict.fromkeys(source))  # a piece may occur twice; ask about the token, not the position
    answer = source[int(np.argmax(weights))]
    return Exercise(
        "cross_head",
        3,
        "Encoder-decoder attention, layer {layer}, head {head}: when the decoder produces \u201c{word}\u201d, which "
        "source token does it look at most?",
        CHOICE,
        answer,
        "Head {head} of layer {layer} gives \u201c{answer}\u201d a weight of {weight} when it produces "
        "\u201c{word}\u201d. Other heads of the same layer may look elsewhere: that is what multiple heads are for.",
        shown_place(
            layer,
            head,
            word=shown_piece(translation.target_output_pieces[row]),
            answer=shown_piece(answer),
            weight=f"{weights.max():.2f}",
        ),
        options=options,
    )


def relu_zeros(model: Transformer, translation: Translation, layer: int = 0) -> Exercise:
    """Stop 4: the share of the FFN's inner units that the ReLU sets to zero on this sentence; on a model with
    another activation (an imported model's swish or GELU), the share of pre-activations at or below zero, which
    that activation squeezes to small negative values instead."""
    activity = numbers.feed_forward_activity(model, translation, layer)
    fields: dict[str, Any] = dict(layer=layer + 1, d_ff=model.config.d_ff, tokens=len(activity.tokens))
    if activity.activation == "relu":
        question = (
            "The feed-forward network of encoder layer {layer} has d_ff = {d_ff} inner units per token. For this "
            "sentence, what percentage of them does the ReLU set to exactly zero?"
        )
        answer = round(100 * activity.zero_fraction)
        explanation = (
            "{answer}% of the {d_ff} \u00d7 {tokens} inner values are zero: max(0, \u00b7) keeps only the units whose "
            "pre-activation is positive, so each token uses a different part of the layer."
        )
    else:
        question = (
            "The feed-forward network of encoder layer {layer} has d_ff = {d_ff} inner units per token, through "
            "{function} where the paper has a ReLU. For this sentence, what percentage of them have a pre-activation "
            "at or below zero?"
        )
        answer = round(100 * activity.off_fraction)
        explanation = (
            "{answer}% of the {d_ff} \u00d7 {tokens} pre-activations are at or below zero. Unlike the paper's ReLU, "
            "{function} does not set them to exactly zero but to small negative values (the figure's other colour), "
            "so every unit still passes a little of its input."
        )
        fields["function"] = ACTIVATION_NAMES[activity.activation]
    return Exercise(
        "relu_zeros",
        4,
        question,
        NUMBER,
        float(answer),
        explanation,
        {**fields, "answer": answer},
        low=0,
        high=100,
        step=1,
        tolerance=10,
    )


def positional_similarity(model: Transformer, translation: Translation) -> Exercise:
    """Stop 5: cosine similarity of the positional vectors of the first and the last source token."""
    n = len(translation.source_ids)
    table = numbers.positions_of(model, n)
    answer = round(numbers.cosine(table[0], table[n - 1]), 2)
    neighbour = numbers.cosine(table[0], table[1]) if n > 1 else 1.0
    # "Falls with the distance" only where it does: the far position less similar than the neighbour.
    explanation = (
        "The cosine is {answer} (positions 0 and 1: {neighbour}). Nearby positions have similar vectors and the "
        "similarity falls with the distance, because the slow sinusoids change little between them."
        if answer < round(neighbour, 2)
        else "The cosine is {answer} (positions 0 and 1: {neighbour}): here the far position is not less similar "
        "than the neighbour. The fast sinusoids come round again, so the similarity does not fall steadily with "
        "the distance."
    )
    return Exercise(
        "pe_cosine",
        5,
        "This model adds a {d_model}-dimensional positional vector to each token. How similar (cosine, from "
        "\u22121 to 1) are the vectors of position 0 and position {last}?",
        NUMBER,
        answer,
        explanation,
        dict(d_model=model.config.d_model, last=n - 1, answer=f"{answer:.2f}", neighbour=f"{neighbour:.2f}"),
        low=-1,
        high=1,
        step=0.05,
        tolerance=0.15,
    )


def crossover(model: Transformer, translation: Translation, lang: str = "en") -> Exercise:
    """Stop 6: the sentence length at which a self-attention layer costs as much as a recurrent one."""
    d = model.config.d_model
    answer = numbers.crossover_length(d)
    n = len(translation.source_ids)
    return Exercise(
        "crossover",
        6,
        "This model has d = {d}. From which sentence length n on does a self-attention layer (n\u00b2\u00b7d) "
        "need more operations than a recurrent layer (n\u00b7d\u00b2)?",
        NUMBER,
        float(answer),
        "n\u00b2\u00b7d = n\u00b7d\u00b2 exactly when n = d = {d}. {cost}",
        dict(d=d, n=n, cost=claims.attention_cost(n, d, lang)),
        low=1,
        high=8 * d,
        step=1,
        tolerance=0.25,
        relative=True,
    )


def smoothed_confidence(
    model: Transformer, tokenizer: Tokenizer, translation: Translation, epsilon: float = numbers.PAPER_LABEL_SMOOTHING
) -> Exercise:
    """Stop 7: the probability the model gives the word it produced at one position. `epsilon` is the ε_ls the
    model was trained with."""
    position = numbers.middle_position(translation)
    word = numbers.next_word(model, tokenizer, translation, position, epsilon)
    answer = round(word.probability, 2)
    explanation = (
        "It gave \u201c{word}\u201d {answer}. With label smoothing (\u03b5_ls = {epsilon}) the training target for "
        "the right word is {target}, not 1, so a well-trained model rarely goes much above it; the rest is spread "
        "over the other {others} words."
        if epsilon > 0
        else "It gave \u201c{word}\u201d {answer}. This model was trained without label smoothing (\u03b5_ls = 0): "
        "its training target for the right word is 1, so it learns to be as sure as it can."
    )
    return Exercise(
        "confidence",
        7,
        "When the model produced \u201c{word}\u201d, how much probability did it give that word?",
        NUMBER,
        answer,
        explanation,
        dict(
            word=shown_piece(word.word),
            answer=f"{answer:.2f}",
            epsilon=f"{epsilon:g}",
            target=f"{word.smoothed_target:.3f}",
            others=word.vocab_size - 1,
        ),
        tolerance=0.1,
    )


# Stop 8's question: greedy against this many beams at this α (the two rows of `numbers.beam_grid` it reads).
BEAM_CHANGES_BEAM, BEAM_CHANGES_ALPHA = 4, 0.6


def beam_changes(rows: Sequence[BeamRow], beam: int = BEAM_CHANGES_BEAM, alpha: float = BEAM_CHANGES_ALPHA) -> Exercise:
    """Stop 8: does beam search (4 beams, α = 0.6) change the greedy translation of this sentence? `rows` holds
    at least greedy's and that beam's at α (the whole grid, or just those two)."""
    greedy = next(r for r in rows if r.beam == 1 and r.alpha == alpha)
    wide = next(r for r in rows if r.beam == beam and r.alpha == alpha)
    changed = greedy.output != wide.output
    return Exercise(
        "beam_changes",
        8,
        "Greedy decoding gives \u201c{greedy}\u201d. Will beam search with {beam} beams and \u03b1 = {alpha} give a "
        "different translation?",
        CHOICE,
        "yes" if changed else "no",
        "Beam {beam} gives \u201c{wide}\u201d (score {wide_score} against {greedy_score} for greedy). On short, "
        "easy sentences the greedy choice is often already the best; beam search helps where an early word "
        "looks good but leads to a poor ending.",
        dict(
            greedy=greedy.output,
            beam=beam,
            alpha=alpha,
            wide=wide.output,
            wide_score=f"{wide.score:.3f}",
            greedy_score=f"{greedy.score:.3f}",
        ),
        options=("yes", "no"),
    )


def worst_variation(lang: str = "en") -> Exercise:
    """Stop 9: which Table 3 row loses most BLEU (from the paper's own numbers)."""
    rows = [r for r in TABLE3 if r.group not in ("base", "big")]
    options = tuple(
        dict.fromkeys(
            r.label
            for r in rows
            if r.change in ("h=1, d_k=d_v=512", "d_k=16", "N=2", "d_model=256, d_k=d_v=32", "P_drop=0.0")
        )
    )
    answer = min((r for r in rows if r.label in options), key=lambda r: r.bleu)
    return Exercise(
        "table3_worst",
        9,
        "Which of these changes to the base model lost the most BLEU in Table 3 (base: 25.8)?",
        CHOICE,
        answer.label,
        "{answer} fell to {bleu} BLEU. {depth} {heads}",
        dict(
            answer=answer.label,
            bleu=answer.bleu,
            depth=claims.depth_in_table3(lang),
            heads=claims.heads_in_table3(lang),
        ),
        options=options,
    )


def embedding_parameters(model: Transformer) -> Exercise:
    """Stop 9: the share of this model's parameters held by its (shared) embedding matrix."""
    config = model.config
    answer = round(100 * numbers.embedding_share(config))
    return Exercise(
        "embedding_share",
        9,
        "This model has a vocabulary of {vocab} pieces and d_model = {d_model}. What percentage of its "
        "parameters is the embedding matrix?",
        NUMBER,
        float(answer),
        "{vocab} \u00d7 {d_model} = {embedding} of its {total} parameters, {answer}%. With the paper's 37,000 "
        "pieces the shared matrix is about 19 M of the base model's 65 M.",
        dict(
            vocab=config.vocab_size,
            d_model=config.d_model,
            embedding=f"{config.vocab_size * config.d_model:,}",
            total=f"{numbers.count_parameters(config):,}",
            answer=answer,
        ),
        low=0,
        high=100,
        step=1,
        tolerance=10,
    )


def build_exercises(
    model: Transformer,
    tokenizer: Tokenizer,
    translation: Translation,
    beam_rows: Sequence[BeamRow],
    *,
    epsilon: float = numbers.PAPER_LABEL_SMOOTHING,
    lang: str = "en",
) -> list[Exercise]:
    """Every exercise of the tour, in stop order, for this model and this sentence. `epsilon` is the ε_ls the
    model was trained with; `lang` words the sentences computed here (explorer.tour.claims)."""
    assert translation.attention is not None, "translate with with_attention=True for the tour's exercises"
    return [
        softmax_without_scaling(model, translation),
        cross_attention_target(translation),
        relu_zeros(model, translation),
        positional_similarity(model, translation),
        crossover(model, translation, lang),
        smoothed_confidence(model, tokenizer, translation, epsilon),
        beam_changes(beam_rows),
        worst_variation(lang),
        embedding_parameters(model),
    ]


def score(exercises: Sequence[Exercise], guesses: dict[str, str | float]) -> tuple[int, int]:
    """(right, answered) over the exercises that have a guess."""
    answered = [e for e in exercises if e.key in guesses]
    return sum(e.is_correct(guesses[e.key]) for e in answered), len(answered)
