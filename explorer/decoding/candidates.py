"""The beam search's candidates of one step: per sentence, the top 2k continuations of its live hypotheses by
cumulative log-probability, best first (`top_candidates`). What to keep among them is the policy's
(`explorer.decoding.policy.select_candidates`); this module only ranks, as fast as the rows allow: by chunks when
every sentence has as many rows, in Python numbers when there are few rows, else with batched tensor operations.
All three give the same candidates, values and order."""

from __future__ import annotations

import math

import torch

from explorer.decoding.hypotheses import LiveHypothesis
from explorer.decoding.top_k import grouped_applies, grouped_top_k, row_top_k

# (cumulative log-prob, parent index into the sentence's live hypotheses, token, token log-prob)
Ranked = tuple[float, int, int, float]


def top_candidates(log_probs: torch.Tensor, lives: list[list[LiveHypothesis]], beam_size: int) -> list[list[Ranked]]:
    """Per sentence, the top 2k (cumulative log-prob, parent, token, token log-prob), best first.

    `log_probs` (N, V) holds the live rows of the sentences in order. A sentence's top 2k continuations are
    among the top 2k of each of its rows (a row adds the same cumulative log-prob to all its tokens), so each
    row is cut to its top 2k first, on the scorer's device and dtype; only those go to float64. Each sentence
    is then padded to k rows with -inf so that one `topk` serves the whole batch; impossible (-inf)
    candidates are dropped.
    """
    vocab = log_probs.shape[1]
    device = log_probs.device
    if len({len(live) for live in lives}) == 1 and grouped_applies(log_probs, 2 * beam_size):
        # Every sentence with as many live rows (always, past the first step, unless hypotheses ran out): the
        # sentences' top 2k at once, from the best chunks of their rows (`grouped_top_k`), 0.38 against 0.68 ms
        # for 32 sentences × 4 rows of 10,000.
        cumulative = torch.tensor([h.log_prob for live in lives for h in live], dtype=torch.float64)
        found = grouped_top_k(log_probs, cumulative, len(lives), 2 * beam_size)
        return [
            [(v, parent, token, lp) for v, parent, token, lp in zip(*sentence, strict=True) if v > -math.inf]
            for sentence in zip(*(t.tolist() for t in found), strict=True)
        ]
    per_row = min(2 * beam_size, vocab)
    row_lps, row_tokens = row_top_k(log_probs, per_row)  # (N, per_row), best first
    if log_probs.shape[0] <= _FEW_ROWS:
        return _top_candidates_few(row_lps.tolist(), row_tokens.tolist(), lives, beam_size)
    row_lps = row_lps.double()
    cumulative = torch.tensor([h.log_prob for live in lives for h in live], dtype=torch.float64, device=device)  # (N,)
    slots = torch.tensor(
        [i * beam_size + j for i, live in enumerate(lives) for j in range(len(live))], dtype=torch.long, device=device
    )
    padded = row_lps.new_full((len(lives) * beam_size, per_row), -math.inf)  # (S*k, per_row)
    padded[slots] = row_lps
    tokens = row_tokens.new_zeros((len(lives) * beam_size, per_row))
    tokens[slots] = row_tokens
    prefix = row_lps.new_zeros(len(lives) * beam_size)  # (S*k,)
    prefix[slots] = cumulative
    total = (padded + prefix[:, None]).view(len(lives), beam_size * per_row)  # column = beam * per_row + rank
    n_cand = min(2 * beam_size, beam_size * vocab)
    top_values, top_index = total.topk(n_cand, dim=1)  # (S, 2k)
    token_lps = padded.view(len(lives), beam_size * per_row).gather(1, top_index)  # (S, 2k)
    token_ids = tokens.view(len(lives), beam_size * per_row).gather(1, top_index)  # (S, 2k)
    parents = torch.div(top_index, per_row, rounding_mode="floor")
    return [
        [(v, parent, token, lp) for v, parent, token, lp in zip(values, rows, ids, lps, strict=False) if v > -math.inf]
        for values, rows, ids, lps in zip(
            top_values.tolist(), parents.tolist(), token_ids.tolist(), token_lps.tolist(), strict=False
        )
    ]


# Up to this many live rows (one sentence's beam of 4, two of them), `top_candidates` ranks in Python: a few
# dozen candidates sort faster than the dozen small tensor operations of the batched path (about 5 µs each).
_FEW_ROWS = 8


def _top_candidates_few(
    row_lps: list[list[float]], row_tokens: list[list[int]], lives: list[list[LiveHypothesis]], beam_size: int
) -> list[list[Ranked]]:
    """`top_candidates` for a few rows, from each row's best tokens as Python lists: the same candidates with
    the same float64 sums (a float32 log-prob is exact as a Python float), ties in the batched path's column
    order (beam, then rank)."""
    per_row = len(row_lps[0]) if row_lps else 0
    n_cand = 2 * beam_size
    ranked = []
    row = 0
    for live in lives:
        candidates = []
        for parent, hypothesis in enumerate(live):
            lps, tokens = row_lps[row + parent], row_tokens[row + parent]
            for rank in range(per_row):
                total = hypothesis.log_prob + lps[rank]
                candidates.append((-total, parent * per_row + rank, total, parent, tokens[rank], lps[rank]))
        row += len(live)
        candidates.sort()
        ranked.append([(v, p, tok, lp) for _, _, v, p, tok, lp in candidates[:n_cand] if v > -math.inf])
    return ranked
