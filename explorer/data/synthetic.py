"""Built-in toy tasks whose correct attention is known in advance.

A sentence is space-separated symbols ("c a t"), so a word-level tokenizer gives one token per symbol and
the cross-attention of a trained model can be checked by eye: copy should be a diagonal, reverse an
anti-diagonal, sort a permutation, shift a diagonal moved by one; bracket's outputs are longer than its inputs
(brackets around the symbols), as a parse tree is. They train in a minute on a CPU.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from explorer.data.corpus import ParallelCorpus


@dataclass(frozen=True)
class Task:
    """A synthetic task: how a target is made from a source, and what the attention should look like."""

    name: str
    description: str
    transform: Callable[[list[int]], list[int]]  # symbol indices in, symbol indices out


def _copy(seq: list[int]) -> list[int]:
    return list(seq)


def _reverse(seq: list[int]) -> list[int]:
    return seq[::-1]


def _sort(seq: list[int]) -> list[int]:
    return sorted(seq)


def _shift(seq: list[int]) -> list[int]:
    return seq[1:] + seq[:1]


OPEN, CLOSE = -1, -2  # a transform's bracket tokens, outside every alphabet
BRACKETS = {OPEN: "(", CLOSE: ")"}


OPENERS = frozenset((0, 4, 8, 14, 20))  # the vowels' places: a, e, i, o, u


def _bracket(seq: list[int]) -> list[int]:
    """The sequence as a two-level tree (Section 6.3's parsing made small): a constituent starts at the first
    symbol and at every vowel, as a determiner starts a noun phrase, inside one for the whole. n symbols in,
    n + 2·(constituents + 1) tokens out."""
    out = [OPEN]
    for i, symbol in enumerate(seq):
        if i == 0 or symbol in OPENERS:
            out += [CLOSE, OPEN] if i else [OPEN]
        out.append(symbol)
    return out + [CLOSE, CLOSE]


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task("copy", "Copy the sequence; attention should follow the diagonal.", _copy),
        Task("reverse", "Reverse the sequence; attention should follow the anti-diagonal.", _reverse),
        Task("sort", "Sort the symbols alphabetically; each output attends to where its symbol was.", _sort),
        Task(
            "shift",
            "Move the first symbol to the end; attention is the diagonal shifted by one, wrapping around.",
            _shift,
        ),
        Task(
            "bracket",
            "Bracket the sequence into a tree, a new phrase at every vowel: \u201cc f a b d\u201d \u2192 "
            "\u201c( ( c f ) ( a b d ) )\u201d. The output is longer than the input, as in parsing (Section 6.3).",
            _bracket,
        ),
    )
}


def task_description(name: str) -> str:
    """One line for the UI saying what the task is and what attention to expect."""
    return _task(name).description


def symbols(n_symbols: int) -> list[str]:
    """The alphabet of a task: letters 'a'.. for up to 26 symbols, else 's00', 's01', ... (sort order kept)."""
    if n_symbols < 2:
        raise ValueError(f"n_symbols must be at least 2, got {n_symbols}")
    if n_symbols <= 26:
        return list(string.ascii_lowercase[:n_symbols])
    width = len(str(n_symbols - 1))
    return [f"s{i:0{width}d}" for i in range(n_symbols)]


@dataclass(frozen=True)
class Shape:
    """How a task's sequences are drawn: lengths uniform in [min_len, max_len], symbols from `n_symbols`."""

    min_len: int = 4
    max_len: int = 12
    n_symbols: int = 20

    def __post_init__(self) -> None:
        if not 1 <= self.min_len <= self.max_len:
            raise ValueError(f"need 1 <= min_len <= max_len, got min_len={self.min_len}, max_len={self.max_len}")

    def possible(self) -> int:
        """How many distinct sequences there are of these lengths over this alphabet."""
        return sum(self.n_symbols**length for length in range(self.min_len, self.max_len + 1))

    def draw(self, rng: random.Random) -> list[int]:
        return [rng.randrange(self.n_symbols) for _ in range(rng.randint(self.min_len, self.max_len))]


def make_task(name: str, n_pairs: int, *, seed: int = 0, **shape: int) -> ParallelCorpus:
    """`n_pairs` random pairs of task `name`; the same arguments always give the same corpus.

    shape: min_len, max_len and n_symbols (`Shape`'s defaults: 4, 12, 20). Symbols are drawn with replacement,
    so repeats occur.
    """
    task, drawn = _task(name), Shape(**shape)
    rng = random.Random(seed)
    seqs = [drawn.draw(rng) for _ in range(n_pairs)]
    return _corpus(task, seqs, drawn.n_symbols, f"{name} (synthetic, seed {seed})")


def make_splits(
    name: str, n_train: int, n_val: int, seed: int = 0, **shape: int
) -> tuple[ParallelCorpus, ParallelCorpus]:
    """Train and validation corpora with no sequence in both, so validation measures generalisation.

    shape: as `make_task`. All sequences are distinct, in train as well as in val. Raises ValueError when the
    lengths and alphabet allow fewer than `n_train + n_val` distinct sequences.
    """
    task, drawn = _task(name), Shape(**shape)
    needed, possible = n_train + n_val, drawn.possible()
    if needed > possible:
        raise ValueError(
            f"{name}: only {possible} distinct sequences of length {drawn.min_len}..{drawn.max_len} over "
            f"{drawn.n_symbols} symbols, but {n_train} train + {n_val} val were asked for"
        )
    # When distinct sequences are scarce, rejection sampling would crawl; the bound keeps it finite.
    if needed > possible // 2:
        raise ValueError(
            f"{name}: {needed} distinct sequences would use more than half of the {possible} possible ones; "
            "use longer sequences or more symbols"
        )
    rng = random.Random(seed)
    seen: set[tuple[int, ...]] = set()
    seqs: list[list[int]] = []
    while len(seqs) < needed:
        seq = drawn.draw(rng)
        if tuple(seq) not in seen:
            seen.add(tuple(seq))
            seqs.append(seq)
    train = _corpus(task, seqs[:n_train], drawn.n_symbols, f"{name} train (synthetic, seed {seed})")
    val = _corpus(task, seqs[n_train:], drawn.n_symbols, f"{name} val (synthetic, seed {seed})")
    return train, val


def _task(name: str) -> Task:
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {sorted(TASKS)}")
    return TASKS[name]


def _corpus(task: Task, seqs: list[list[int]], n_symbols: int, corpus_name: str) -> ParallelCorpus:
    alphabet = symbols(n_symbols)

    def text(seq: list[int]) -> str:
        return " ".join(BRACKETS[i] if i < 0 else alphabet[i] for i in seq)

    return ParallelCorpus(
        name=corpus_name,
        source=tuple(text(seq) for seq in seqs),
        target=tuple(text(task.transform(seq)) for seq in seqs),
        dropped=0,
    )
