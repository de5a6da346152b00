"""Built-in toy tasks whose correct attention is known in advance.

A sentence is space-separated symbols ("c a t"), so a word-level tokenizer gives one token per symbol and
the cross-attention of a trained model can be checked by eye: copy should be a diagonal, reverse an
anti-diagonal, sort a permutation, shift a diagonal moved by one. They train in a minute on a CPU.
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


def make_task(
    name: str,
    n_pairs: int,
    *,
    min_len: int = 4,
    max_len: int = 12,
    n_symbols: int = 20,
    seed: int = 0,
) -> ParallelCorpus:
    """`n_pairs` random pairs of task `name`; the same arguments always give the same corpus.

    Sequence lengths are uniform in [min_len, max_len]; symbols are drawn with replacement, so repeats occur.
    """
    task = _task(name)
    _check_lengths(min_len, max_len)
    rng = random.Random(seed)
    seqs = [_random_sequence(rng, min_len, max_len, n_symbols) for _ in range(n_pairs)]
    return _corpus(task, seqs, n_symbols, f"{name} (synthetic, seed {seed})")


def make_splits(
    name: str,
    n_train: int,
    n_val: int,
    seed: int = 0,
    *,
    min_len: int = 4,
    max_len: int = 12,
    n_symbols: int = 20,
) -> tuple[ParallelCorpus, ParallelCorpus]:
    """Train and validation corpora with no sequence in both, so validation measures generalisation.

    All sequences are distinct, in train as well as in val. Raises ValueError when the lengths and alphabet
    allow fewer than `n_train + n_val` distinct sequences.
    """
    task = _task(name)
    _check_lengths(min_len, max_len)
    needed = n_train + n_val
    possible = sum(n_symbols**length for length in range(min_len, max_len + 1))
    if needed > possible:
        raise ValueError(
            f"{name}: only {possible} distinct sequences of length {min_len}..{max_len} over {n_symbols} "
            f"symbols, but {n_train} train + {n_val} val were asked for"
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
        seq = _random_sequence(rng, min_len, max_len, n_symbols)
        if tuple(seq) not in seen:
            seen.add(tuple(seq))
            seqs.append(seq)
    train = _corpus(task, seqs[:n_train], n_symbols, f"{name} train (synthetic, seed {seed})")
    val = _corpus(task, seqs[n_train:], n_symbols, f"{name} val (synthetic, seed {seed})")
    return train, val


def _task(name: str) -> Task:
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {sorted(TASKS)}")
    return TASKS[name]


def _check_lengths(min_len: int, max_len: int) -> None:
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")


def _random_sequence(rng: random.Random, min_len: int, max_len: int, n_symbols: int) -> list[int]:
    return [rng.randrange(n_symbols) for _ in range(rng.randint(min_len, max_len))]


def _corpus(task: Task, seqs: list[list[int]], n_symbols: int, corpus_name: str) -> ParallelCorpus:
    alphabet = symbols(n_symbols)

    def text(seq: list[int]) -> str:
        return " ".join(alphabet[i] for i in seq)

    return ParallelCorpus(
        name=corpus_name,
        source=tuple(text(seq) for seq in seqs),
        target=tuple(text(task.transform(seq)) for seq in seqs),
        dropped=0,
    )
