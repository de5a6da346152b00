"""Cross-attention folded with one batch's encoder memory: two small products a step instead of two weight reads.

During decoding the keys K_h and values V_h of a cross-attention head are fixed for the whole search (the
encoder memory projected once). The products on either side of the attention are therefore linear maps that can
be multiplied out once per batch, before the first step:

    scores_h = (y W_h^Q + b_h^Q) K_h^T / √d_k = y (W_h^Q K_h^T / √d_k) + b_h^Q K_h^T / √d_k
    out      = Σ_h softmax(scores_h) V_h W_h^O + b^O = Σ_h softmax(scores_h) (V_h W_h^O) + b^O

(W_h^Q: the head's d_k columns of W^Q as it multiplies rows; W_h^O: its d_k rows of W^O.) The same function as
Eq. 1 and the multi-head concatenation, reassociated. What a step reads per layer drops from W^Q and W^O
(2·d_model² floats, 512 KiB for the shipped model) to groups·heads·src·2·d_model floats (a 15-token sentence:
120 KiB), and the attention kernel call and two head reshapes go too. A decoder step of a small model on a CPU is
bound by reading weights (`linear_kernels.py`), so this pays exactly when the folded matrices are smaller than
the weights: `worth_folding`. A batch of 32 sentences is not (its step multiplies 32·4 rows by shared weights,
where folded matrices would be one per sentence), so batches decode as before.

The sums run in another order than the unfolded products, so the log-probabilities agree to float32 rounding;
`tests/fastpath/test_folded_cross.py` holds them to the unfolded step's and the search's outputs to the reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from explorer.model.attention import MultiHeadAttention


@dataclass(frozen=True)
class FoldedCross:
    """Every decoder layer's cross-attention folded with the memory of `groups` sentences.

    scores: (layers, groups, heads·src, d_model), K_h W_h^Q / √d_k of every head stacked (the step multiplies
        by its transpose, W_h^Q K_h^T / √d_k, as BLAS reads a transposed operand in place);
    scores_bias: (layers, groups, 1, heads·src), b_h^Q K_h^T / √d_k plus the source mask (0 or -inf per token),
        so that the step adds the mask with the bias;
    values: (layers, groups, heads·src, d_model), V_h W_h^O stacked by head;
    out_bias: (layers, 1, 1, d_model), b^O.
    """

    scores: torch.Tensor
    scores_bias: torch.Tensor
    values: torch.Tensor
    out_bias: torch.Tensor
    # Per layer, the four operands as `attend` multiplies by them, made once here: indexing and transposing
    # them at every step were five small operations a layer, each a microsecond or two of a 0.6 ms step.
    operands: tuple[tuple[torch.Tensor, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Each tensor split by layer at once (unbind): two or three view operations a tensor, not one or two a
        # layer, made before the first step of every sentence.
        if self.scores.shape[1] == 1:  # one sentence (greedy, or its beam): two-dimensional, no batch dimension
            parts = (self.scores[:, 0].transpose(1, 2), self.scores_bias[:, 0], self.values[:, 0], self.out_bias[:, 0])
        else:
            parts = (self.scores.transpose(2, 3), self.scores_bias, self.values, self.out_bias)
        operands = zip(*(part.unbind(0) for part in parts), strict=True)
        object.__setattr__(self, "operands", tuple(operands))

    def select(self, index: torch.Tensor) -> FoldedCross:
        """Keep the groups `index` (a long tensor), in that order, as a beam's reordering needs."""
        return FoldedCross(
            self.scores.index_select(1, index),
            self.scores_bias.index_select(1, index),
            self.values.index_select(1, index),
            self.out_bias,
        )

    def attend(self, index: int, h: torch.Tensor, heads: int) -> torch.Tensor:
        """Layer `index`'s cross-attention sub-layer output before the residual: h (rows, d_model) -> same, the
        rows in groups of rows / groups consecutive rows (a sentence's beam)."""
        scores_t, scores_bias, values, out_bias = self.operands[index]
        rows = h.shape[0]
        if scores_t.dim() == 2:  # one group: every row attends over the same memory
            scores = torch.addmm(scores_bias, h, scores_t)  # (rows, heads·src)
            weights = torch.softmax(scores.view(rows, heads, -1), dim=-1)
            return torch.addmm(out_bias, weights.view(rows, -1), values)
        groups = scores_t.shape[0]
        h = h.view(groups, rows // groups, -1)
        scores = torch.baddbmm(scores_bias, h, scores_t)  # (groups, size, heads·src)
        weights = torch.softmax(scores.view(groups, rows // groups, heads, -1), dim=-1).view(groups, rows // groups, -1)
        return torch.baddbmm(out_bias, weights, values).view(rows, -1)


@dataclass(frozen=True)
class CrossWeights:
    """A decoder's cross-attention weights, stacked over layers in the shapes folding multiplies by.

    w_q: (layers, 1, heads, d_k, d_model), each head's rows of W^Q (out, in), times 1/√d_k;
    b_q: (layers, 1, heads, d_k, 1), b^Q by head, times 1/√d_k;
    w_o: (layers, 1, heads, d_k, d_model), each head's d_k input columns of W^O, transposed;
    b_o: (layers, 1, 1, d_model).
    """

    w_q: torch.Tensor
    b_q: torch.Tensor
    w_o: torch.Tensor
    b_o: torch.Tensor


def cross_weights(attentions: Sequence[MultiHeadAttention]) -> CrossWeights:
    """The decoder layers' cross-attentions (d_k == d_v), their weights as nn.Linear holds them, (out, in)."""
    heads, d_k, d_model = attentions[0].n_heads, attentions[0].d_k, attentions[0].d_model
    scale = 1.0 / math.sqrt(d_k)  # SDPA's default scale, Eq. 1
    w_q = torch.stack([a.w_q.weight.detach().view(heads, d_k, d_model) for a in attentions]) * scale
    b_q = torch.stack([a.w_q.bias.detach().view(heads, d_k, 1) for a in attentions]) * scale
    w_o = torch.stack([a.w_o.weight.detach().view(d_model, heads, d_k).permute(1, 2, 0) for a in attentions])
    b_o = torch.stack([a.w_o.bias.detach() for a in attentions]).view(len(attentions), 1, 1, d_model)
    w_q, b_q, w_o = (w.unsqueeze(1).contiguous() for w in (w_q, b_q, w_o))  # a groups dimension of 1
    return CrossWeights(w_q, b_q, w_o, b_o.contiguous())


def worth_folding(groups: int, heads: int, src: int, d_model: int) -> bool:
    """Fold when the folded matrices of a layer are no larger than W^Q and W^O together (see the module doc)."""
    return groups * heads * src <= d_model


def fold_cross(cross_kv: torch.Tensor, src_mask: torch.Tensor, weights: CrossWeights) -> FoldedCross:
    """cross_kv (layers, 2, groups, heads, src, d_k): keys and values as `PackedDecoder.start` projects them;
    src_mask (groups, 1, 1, src) additive. Three batched products for all layers at once."""
    layers, _, groups, heads, src, _ = cross_kv.shape
    keys, values = cross_kv[:, 0], cross_kv[:, 1]  # (layers, groups, heads, src, d_k)
    d_model = weights.w_q.shape[-1]
    scores = torch.matmul(keys, weights.w_q).view(layers, groups, heads * src, d_model)  # K_h W_h^Q / √d_k
    bias = torch.matmul(keys, weights.b_q).view(layers, groups, heads, src)  # b_h^Q K_h^T / √d_k
    bias = (bias + src_mask.view(1, groups, 1, src)).view(layers, groups, 1, heads * src)
    folded_values = torch.matmul(values, weights.w_o).view(layers, groups, heads * src, d_model)  # V_h W_h^O
    return FoldedCross(scores, bias, folded_values, weights.b_o)
