"""Tables over a beam search (Section 6.1): the n-best list, one step's candidates, a node's hypothesis.

Plain functions over the `Hypothesis` / `BeamTrace` data of explorer/decoding/hypotheses.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.decoding.hypotheses import BeamTrace, Hypothesis
from explorer.decoding.policy import length_penalty, normalized_score
from explorer.inference import translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer


def nbest_rows(
    hypotheses: Sequence[Hypothesis], tokenizer: Tokenizer, alpha: float, form: str = "gnmt"
) -> list[dict[str, Any]]:
    """One row per hypothesis, best first: text, pieces, length, log-probability, lp(length), score; lp in the
    form the search scored with (the model's `length_normalisation`), so score = log p / lp on every row."""
    return [
        {
            "rank": rank,
            "translation": tokenizer.decode(h.tokens),
            "pieces": " ".join(tokenizer.target_pieces(h.tokens)),
            "length": len(h.tokens),
            "log p": h.log_prob,
            "lp(length)": length_penalty(len(h.tokens), alpha, form),
            "score": h.score,
            "finished": h.finished,
        }
        for rank, h in enumerate(hypotheses, start=1)
    ]


def node_tokens(trace: BeamTrace) -> dict[int, tuple[int, ...]]:
    """Token sequence (no BOS) of every node id in the trace, live or candidate; the root is ()."""
    tokens: dict[int, tuple[int, ...]] = {trace.steps[0].live[0].id: ()} if trace.steps else {}
    for step in trace.steps:
        for node in step.live:
            tokens[node.id] = tuple(node.tokens)
        for candidate in step.candidates:
            tokens[candidate.id] = tokens[candidate.parent_id] + (candidate.token,)
    return tokens


def step_rows(trace: BeamTrace, step: int, tokenizer: Tokenizer) -> list[dict[str, Any]]:
    """The 2k candidates of `step`, best first: the prefix they extend (as text), the token piece,
    log-probabilities, status."""
    if not 0 <= step < len(trace.steps):
        raise ValueError(f"step must be in 0..{len(trace.steps) - 1}, got {step}")
    tokens = node_tokens(trace)
    rows = []
    for rank, c in enumerate(trace.steps[step].candidates, start=1):
        prefix = tokens[c.parent_id]
        rows.append(
            {
                "rank": rank,
                "prefix": tokenizer.decode(prefix) if prefix else "<s>",
                "token": tokenizer.target_pieces([c.token])[0],
                "log p(token)": c.token_log_prob,
                "log p(prefix + token)": c.log_prob,
                "score": c.score,
                "status": c.status,
            }
        )
    return rows


SHORT_WORDS = 10  # words in a sentence whose search tree stays readable


def beam_differs(
    model: Transformer, tokenizer: Tokenizer, sentences: Sequence[str], *, beam_size: int = 4, alpha: float = 0.6
) -> str | None:
    """The shortest of `sentences` (at most `SHORT_WORDS` words; the first among equals) on which beam search
    with `beam_size` beams and length penalty `alpha` finds another output than greedy decoding, one that ranks
    higher by the α-normalised score the search uses (Section 6.1); None when there is none. A sentence on
    which both agree cannot show what the beam is for; a short one keeps its search tree readable."""
    short = [s for s in sentences if 0 < len(s.split()) <= SHORT_WORDS]
    if not short:
        return None
    greedy = translate(model, tokenizer, short, beam_size=1, alpha=alpha)
    beam = translate(model, tokenizer, short, beam_size=beam_size, alpha=alpha)
    differing = [
        sentence
        for sentence, g, b in zip(short, greedy, beam, strict=True)
        if g.output_ids != b.output_ids and b.score > normalized_score(g.log_prob, len(g.output_ids), alpha)
    ]
    return min(differing, key=lambda s: len(s.split()), default=None)
