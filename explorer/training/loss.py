"""Label-smoothed cross-entropy (Section 5.4, ε_ls = 0.1)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def label_smoothed_loss(logits: torch.Tensor, target: torch.Tensor, *, smoothing: float, pad_id: int) -> torch.Tensor:
    """Summed loss over non-pad target tokens. logits (batch, tgt, vocab), target (batch, tgt).

    torch's label smoothing spreads ε uniformly over the whole vocabulary, the usual reading of the paper.
    Returns a sum so that callers can normalise by the token count of the whole (possibly distributed) batch.
    """
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        target.reshape(-1),
        ignore_index=pad_id,
        label_smoothing=smoothing,
        reduction="sum",
    )


def token_nll(logits: torch.Tensor, target: torch.Tensor, *, pad_id: int) -> torch.Tensor:
    """Summed negative log-likelihood without smoothing (for validation loss and perplexity)."""
    return label_smoothed_loss(logits, target, smoothing=0.0, pad_id=pad_id)
