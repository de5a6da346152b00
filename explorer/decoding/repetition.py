"""Repeated phrases: finding an n-gram said three times in a row, and the no-repeat-n-gram constraint.

Out of domain, a small translation model sometimes loops ("ein Mann ein Mann ein Mann ...", or inside a word:
"NADADADADAD") until the length limit. `repeated_ngram` finds such a loop in a sequence (words, pieces or
token ids) and `output_loop` in a translation, so the CLI's JSON and the app can flag it.
`ban_repeated_ngrams` is the usual remedy, off by default: a mask over the next-token log-probabilities that
forbids, in every live row, any token that would complete an n-gram the row already holds (fairseq's and
Hugging Face's `no_repeat_ngram_size`). It changes the search, not the model: outputs may get worse where a
phrase legitimately repeats ("a man and a man's dog").
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import torch

from explorer.tokenizer import WORD_START

MIN_N = 2  # a single repeated word ("very very very") is language; a repeated phrase is a loop
MIN_TIMES = 3


@dataclass(frozen=True)
class Repeat:
    """`tokens[start : start + n]` occurs `times` times back to back from `start`."""

    start: int
    n: int
    times: int


def repeated_ngram(tokens: Sequence[Hashable], min_n: int = MIN_N, min_times: int = MIN_TIMES) -> Repeat | None:
    """The first n-gram (n >= `min_n`) that occurs `min_times` or more times in a row, else None.

    "In a row" means back to back: tokens[i:i+n] == tokens[i+n:i+2n] == tokens[i+2n:i+3n]. The earliest
    start wins, then the shortest n; `times` counts every consecutive copy. A token repeated six times is
    also a 2-gram repeated three times, and is flagged. O(len² / min_times) comparisons, nothing for
    translation-length outputs.
    """
    assert min_n >= 1 and min_times >= 2, f"need min_n >= 1 and min_times >= 2, got {min_n}, {min_times}"
    items = list(tokens)
    length = len(items)
    for start in range(length):
        for n in range(min_n, (length - start) // min_times + 1):
            unit = items[start : start + n]
            times = 1
            while items[start + times * n : start + (times + 1) * n] == unit:
                times += 1
            if times >= min_times:
                return Repeat(start, n, times)
    return None


def loop_unit(tokens: Sequence[Hashable], repeat: Repeat) -> Repeat:
    """The same loop told by its shortest unit: "Hund Hund" three times over eight "Hund" is "Hund" eight
    times. `repeat` is what `repeated_ngram` found in `tokens`; the unit is the shortest period of its n-gram,
    and `times` counts that unit's copies back to back from `repeat.start`."""
    items = list(tokens)
    gram = items[repeat.start : repeat.start + repeat.n]
    period = next(p for p in range(1, repeat.n + 1) if repeat.n % p == 0 and gram == gram[:p] * (repeat.n // p))
    unit = items[repeat.start : repeat.start + period]
    times = 1
    while items[repeat.start + times * period : repeat.start + (times + 1) * period] == unit:
        times += 1
    return Repeat(repeat.start, period, times)


def is_repetitive(tokens: Sequence[Hashable]) -> bool:
    """True when some n-gram (n >= 2) is repeated three or more times in a row: the loop a
    small model falls into out of domain (module doc), which the CLI and the app flag."""
    return repeated_ngram(tokens) is not None


def output_loop(output: str, pieces: Sequence[str], eos: str = "</s>") -> tuple[str, int] | None:
    """The loop in a translation, as (its unit as text, how many times in a row), or None.

    Words first ("ein Mann ein Mann ein Mann" -> ("ein Mann", 3)); then the sub-word pieces, because out of
    domain the model also loops inside a word, which no word-level check sees ("NADADADADAD": pieces
    '▁NA' 'D' 'A' 'D' 'A' ... -> ("DA", 5)). `pieces` are the output's pieces as the tokenizer shows them
    (with '▁' word starts); a final `eos` piece is ignored.
    """
    words = output.split()
    found = repeated_ngram(words)
    if found is not None:
        unit = loop_unit(words, found)
        return " ".join(words[unit.start : unit.start + unit.n]), unit.times
    body = list(pieces[:-1] if pieces and pieces[-1] == eos else pieces)
    found = repeated_ngram(body)
    if found is not None:
        unit = loop_unit(body, found)
        return "".join(body[unit.start : unit.start + unit.n]).replace(WORD_START, " ").strip(), unit.times
    return None


def ban_repeated_ngrams(log_probs: torch.Tensor, history: torch.Tensor, n: int) -> torch.Tensor:
    """`log_probs` with -inf at every token that would repeat an n-gram of its row's history.

    log_probs: (rows, vocab), the next-token scores of every live row; history: (rows, t) long, the tokens
    each row has produced so far (without BOS). Row r bans token v when history[r, -(n-1):] + [v] already
    occurs in history[r]. A new tensor comes back; the input is not changed. EOS is never banned, since it
    never occurs inside a history: a row can always end.
    """
    assert n >= 1, f"no_repeat_ngram must be >= 1, got {n}"
    assert history.dim() == 2 and history.shape[0] == log_probs.shape[0], (
        f"history must be (rows={log_probs.shape[0]}, t), got {tuple(history.shape)}"
    )
    steps = history.shape[1]
    if steps < n:  # shorter than one n-gram (n - 1 to match + 1 seen after): nothing can repeat yet
        return log_probs
    windows = history.unfold(1, n, 1)  # (rows, steps - n + 1, n): every n-gram of each row
    prefix = history[:, steps - n + 1 :]  # (rows, n - 1): what the next token would extend
    matches = (windows[:, :, : n - 1] == prefix[:, None, :]).all(dim=-1)  # (rows, steps - n + 1)
    rows, where = matches.nonzero(as_tuple=True)
    if rows.numel() == 0:
        return log_probs
    banned = windows[rows, where, n - 1]
    masked = log_probs.clone()
    masked[rows.to(masked.device), banned.to(masked.device)] = -math.inf
    return masked
