"""The search policy of Section 6.1's beam search: the length penalty, which continuations a step keeps, and when a
sentence stops. Small functions over plain numbers, so the rules can be read and tested apart from the loop that
applies them (`explorer.decoding.search`).

The paper decodes with "beam search with a beam size of 4 and length penalty α = 0.6" (Section 6.1, citing Wu et
al. 2016, GNMT). A hypothesis scores its total log-probability divided by lp(length); imported Marian models
divide by length^α instead (`length_penalty`'s form "power").

Search policy, one step of one sentence (`select_candidates`): rank the top 2k continuations of all live
hypotheses by cumulative log-probability. A continuation ending in EOS finishes if it ranks among the
first k, i.e. if it would have been kept had it not ended (fairseq's rule); the other continuations fill
the k live slots in rank order; the rest are pruned.

Stopping rule (`stop_reason`), checked after every step of a sentence:
  * ``early_stopping=True`` (default): stop once the sentence holds k finished hypotheses. Together with
    the finishing rule above this makes beam size 1 exactly greedy search.
  * ``early_stopping=False``: stop once it holds k finished hypotheses and no live one can still beat the
    worst of the k best: a live hypothesis with cumulative log-prob L <= 0 can at best end with score
    L / max(lp) over its possible final lengths, lp(max_len) when α >= 0 (Tensor2Tensor's bound).
  * Always: stop when no live hypothesis is left, or at max_len tokens; at max_len the live hypotheses are
    finalized with ``finished=False``.
The n-best list ranks finished hypotheses first, then those cut at max_len, each by score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

Status = Literal["kept", "pruned", "finished"]
KEPT: Final = "kept"
PRUNED: Final = "pruned"
FINISHED: Final = "finished"

# Why a sentence's search stopped (`BeamTrace.stop_reason`).
STOP_NO_LIVE: Final = "no live hypothesis left"
STOP_BEAM_FULL: Final = "the beam is full of finished hypotheses"
STOP_BOUND: Final = "no live hypothesis can beat the finished ones"
STOP_MAX_LEN: Final = "max_len reached"


def length_penalty(length: int, alpha: float, form: str = "gnmt") -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6)^α (Wu et al. 2016, Eq. 14), used with α = 0.6 in Section 6.1; with
    form="power", |Y|^α, the normalisation of Marian and of Hugging Face's `length_penalty` (imported models)."""
    if form == "power":  # the empty prefix (a beam tree's root) counts as length 1, not a division by zero
        return float(max(length, 1)) ** alpha
    return ((5.0 + length) / 6.0) ** alpha


def normalized_score(log_prob: float, length: int, alpha: float, form: str = "gnmt") -> float:
    """Score of a hypothesis: total log-probability / lp(length), length counting EOS if present."""
    return log_prob / length_penalty(length, alpha, form)


def select_candidates(ranked_tokens: Sequence[int], beam_size: int, eos_id: int) -> list[Status]:
    """The search policy of one step: status of each candidate, given their tokens best first.

    EOS among the first `beam_size` ranks finishes; other tokens fill the `beam_size` live slots in
    rank order; everything else is pruned.
    """
    statuses: list[Status] = []
    n_kept = 0
    for rank, token in enumerate(ranked_tokens):
        if token == eos_id:
            statuses.append(FINISHED if rank < beam_size else PRUNED)
        elif n_kept < beam_size:
            statuses.append(KEPT)
            n_kept += 1
        else:
            statuses.append(PRUNED)
    return statuses


def stop_reason(
    finished_scores: Sequence[float],
    live_log_probs: Sequence[float],
    length: int,
    max_len: int,
    beam_size: int,
    alpha: float,
    early_stopping: bool,
    form: str = "gnmt",
) -> str | None:
    """Why a sentence stops after a step that produced `length` tokens, or None to go on (module doc)."""
    if not live_log_probs:
        return STOP_NO_LIVE
    if len(finished_scores) >= beam_size:
        if early_stopping:
            return STOP_BEAM_FULL
        worst_of_best = sorted(finished_scores, reverse=True)[beam_size - 1]
        best_lp = max(length_penalty(length + 1, alpha, form), length_penalty(max_len, alpha, form))
        if max(live_log_probs) / best_lp <= worst_of_best:
            return STOP_BOUND
    if length >= max_len:
        return STOP_MAX_LEN
    return None
