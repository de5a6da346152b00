"""Attribution of an output token's log-probability to the source tokens: gradient × input and integrated
gradients (Sundararajan et al., 2017, "Axiomatic Attribution for Deep Networks", Eq. 1), through Captum.

The function attributed is F(e) = log p(y_t | y_<t, source), teacher-forced on the translation, as a function
of the source's token embeddings e_j = E[x_j]·√d_model (Section 3.4); the positional encodings are added to e
inside F and stay fixed. The baseline is e = 0: the positions alone, no word. Integrated gradients then satisfy
completeness (Proposition 1): Σ_j Σ_d IG_jd = F(e) − F(0), which is `delta`; `completeness_error` is what
the n_steps-point quadrature misses. A source token's attribution is the sum over its embedding dimensions.

The encoder is run here from the embeddings on (the model's `encode` starts from token ids) with the model's
own layers, norm and positional table; a test holds F(e) equal to the model's log-probability. Gradients are
taken with `torch.autograd.grad` (Captum), so nothing is written into the shared model's `.grad`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from explorer.model import EncoderOutput, Transformer

IG_STEPS = 32  # the number of integration steps the pages and the command line use by default


@dataclass(frozen=True)
class TokenAttribution:
    """One output token's attribution to every source piece (the source's final EOS included).

    position: the token's row among the target output pieces (0-based); token_id: the id it produced.
    gradient_x_input, integrated_gradients: (src,), one value per source piece.
    log_prob: F(e); baseline_log_prob: F(0); n_steps: the integration steps; completeness_error: Σ IG − delta.
    """

    position: int
    token_id: int
    log_prob: float
    baseline_log_prob: float
    gradient_x_input: np.ndarray
    integrated_gradients: np.ndarray
    n_steps: int
    completeness_error: float

    @property
    def delta(self) -> float:
        """F(e) − F(0): what the integrated gradients must sum to."""
        return self.log_prob - self.baseline_log_prob


def source_embeddings(model: Transformer, source_ids: Sequence[int]) -> torch.Tensor:
    """(src, d_model): E[x_j]·√d_model, the part of the encoder's input that belongs to the words."""
    device = next(model.parameters()).device
    ids = torch.tensor(list(source_ids), dtype=torch.long, device=device)
    return model.embedding(ids).detach() * model.embedding_scale


def _log_prob_from_embeddings(
    embedded: torch.Tensor, target_in: torch.Tensor, positions: torch.Tensor, targets: torch.Tensor, model: Transformer
) -> torch.Tensor:
    """embedded (n, src, d_model) token embeddings; target_in (n, tgt) ids starting with BOS; positions and
    targets (n,) -> (n,): log p(targets[i] at row positions[i]). The encoder as `Transformer.encode` runs it,
    from the embeddings on (eval mode: no dropout, no padding in one sentence)."""
    n, src_len, _ = embedded.shape
    x = embedded + model.positional_table("source")[:src_len].to(embedded.dtype)
    src_mask = torch.ones(n, 1, 1, src_len, dtype=torch.bool, device=embedded.device)
    for layer in model.encoder_layers:
        x = layer(x, src_mask).hidden
    encoded = EncoderOutput(model.encoder_norm(x), src_mask, None)
    logits = model.decode(target_in, encoded).logits  # (n, tgt, vocab)
    rows = logits[torch.arange(n, device=logits.device), positions].float().log_softmax(-1)  # (n, vocab)
    return rows.gather(1, targets.view(-1, 1)).squeeze(1)


def attribute(
    model: Transformer,
    source_ids: Sequence[int],
    output_ids: Sequence[int],
    positions: Sequence[int] | None = None,
    *,
    n_steps: int = IG_STEPS,
) -> list[TokenAttribution]:
    """Attribution of each output token at `positions` (rows of the target output; default every one) of one
    translation (ids as in `Translation`) to its source pieces. All positions go through Captum together: one
    batch of len(positions) · n_steps teacher-forced passes."""
    from captum.attr import InputXGradient, IntegratedGradients  # Captum loads in about a second: only when used

    assert not model.training, "attribution reads the model in eval mode (dropout off)"
    assert n_steps >= 2, f"integrated gradients need at least 2 steps, got {n_steps}"
    config = model.config
    rows = list(range(len(output_ids))) if positions is None else [int(p) for p in positions]
    assert all(0 <= p < len(output_ids) for p in rows), f"positions {rows} outside 0..{len(output_ids) - 1}"
    device = next(model.parameters()).device
    target_in = torch.tensor([config.bos_id, *output_ids[:-1]], dtype=torch.long, device=device)
    n = len(rows)
    with torch.inference_mode(False), torch.enable_grad():
        embedded = source_embeddings(model, source_ids).clone().unsqueeze(0).expand(n, -1, -1).contiguous()
        extra = (
            target_in.unsqueeze(0).expand(n, -1).contiguous(),
            torch.tensor(rows, dtype=torch.long, device=device),
            torch.tensor([output_ids[p] for p in rows], dtype=torch.long, device=device),
            model,
        )

        def forward(
            e: torch.Tensor, tgt: torch.Tensor, pos: torch.Tensor, ids: torch.Tensor, m: Transformer
        ) -> torch.Tensor:
            return _log_prob_from_embeddings(e, tgt, pos, ids, m)

        embedded.requires_grad_(True)
        gxi = InputXGradient(forward).attribute(embedded, additional_forward_args=extra)
        ig, error = IntegratedGradients(forward).attribute(
            embedded, additional_forward_args=extra, n_steps=n_steps, return_convergence_delta=True
        )
        with torch.no_grad():
            at_input = forward(embedded, *extra)
            at_baseline = forward(torch.zeros_like(embedded), *extra)
    per_token_gxi = gxi.detach().sum(-1).float().cpu().numpy()  # (n, src)
    per_token_ig = ig.detach().sum(-1).float().cpu().numpy()
    return [
        TokenAttribution(
            position=p,
            token_id=int(output_ids[p]),
            log_prob=float(at_input[i]),
            baseline_log_prob=float(at_baseline[i]),
            gradient_x_input=per_token_gxi[i],
            integrated_gradients=per_token_ig[i],
            n_steps=n_steps,
            completeness_error=float(error[i]),
        )
        for i, p in enumerate(rows)
    ]
