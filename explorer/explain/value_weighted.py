"""Value-weighted attention (Kobayashi et al., 2020, "Attention is Not Only a Weight", Section 3).

A head's output at query i is Σ_j α_ij · f(x_j), where f(x) = (x W_V^h + b_V^h) W_O^h is the head's value
projection followed by its slice of the output projection W^O (the output bias b_O belongs to no token and is
left out, as in the paper). A weight α_ij on a token whose transformed vector f(x_j) is short moves almost
nothing, so the paper reads the norm ‖α_ij · f(x_j)‖ = α_ij · ‖f(x_j)‖ instead of α_ij alone.

The values come from the model's own explicit attention path (`Transformer.forward(inspect=(family, layer))`),
one teacher-forced pass per attention module, so they are exactly what the model computed; nothing is kept on
the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from explorer.inference import pad
from explorer.model import MultiHeadAttention, SentenceAttention, Transformer
from explorer.model.head_mask import HeadMask
from explorer.paper import FAMILIES


@dataclass(frozen=True)
class ValueWeighted:
    """One sentence's attention weights and value-weighted norms, padding removed.

    raw: the weights α, as `SentenceAttention` (layers, heads, q, k) per family.
    norms: ‖α_ij · f(x_j)‖ per family, the same shapes; rows do not sum to one.
    value_norms: ‖f(x_j)‖ per family, (layers, heads, k).
    """

    raw: SentenceAttention
    norms: dict[str, np.ndarray]
    value_norms: dict[str, np.ndarray]

    def weighted(self, family: str) -> np.ndarray:
        """(layers, heads, q, k): the norms of `family`, each row divided by its sum, so a row is the share of
        what the head moves that comes from each key (comparable with the raw weights' rows)."""
        norms = self.norms[family]
        total = norms.sum(axis=-1, keepdims=True)
        return np.divide(norms, total, out=np.zeros_like(norms), where=total > 0)


def attention_module(model: Transformer, family: str, layer: int) -> MultiHeadAttention:
    """The attention module of `family` in `layer` (0-based)."""
    if family == "encoder_self":
        return model.encoder_layers[layer].self_attention
    if family == "decoder_self":
        return model.decoder_layers[layer].self_attention
    if family == "cross":
        return model.decoder_layers[layer].cross_attention
    raise KeyError(f"unknown attention family {family!r}; expected one of {FAMILIES}")


def transformed_value_norms(value: torch.Tensor, w_o: torch.Tensor) -> torch.Tensor:
    """‖f(x_j)‖ per head: value (heads, k, d_v) = x W_V^h + b_V^h; w_o (d_model, heads · d_v), the weight of
    the output projection (torch's (out, in) layout) -> (heads, k)."""
    heads, _, d_v = value.shape
    assert w_o.shape[1] == heads * d_v, f"W^O takes {w_o.shape[1]} inputs, expected heads · d_v = {heads * d_v}"
    per_head = w_o.view(w_o.shape[0], heads, d_v)  # columns h·d_v … (h+1)·d_v are head h's slice of W^O
    transformed = torch.einsum("hkv,dhv->hkd", value, per_head)  # (heads, k, d_model)
    return transformed.norm(dim=-1)


def weight_by_values(weights: np.ndarray, value_norms: np.ndarray) -> np.ndarray:
    """α_ij · ‖f(x_j)‖: weights (..., heads, q, k), value_norms (..., heads, k) -> (..., heads, q, k)."""
    w, v = np.asarray(weights, dtype=np.float64), np.asarray(value_norms, dtype=np.float64)
    assert w.shape[:-2] == v.shape[:-1] and w.shape[-1] == v.shape[-1], (
        f"weights {w.shape} and value norms {v.shape} must be (..., heads, q, k) and (..., heads, k)"
    )
    return w * v[..., None, :]


@torch.inference_mode()
def value_weighted(
    model: Transformer, source_ids: Sequence[int], output_ids: Sequence[int], head_mask: HeadMask | None = None
) -> ValueWeighted:
    """The raw and value-weighted attention of one translation (ids as in `Translation`: source with its final
    EOS, output as generated), teacher-forced like `explorer.inference.attention_for`; `head_mask`: with those
    heads switched off, as the translation was decoded (an ablated translation's attention)."""
    config = model.config
    device = next(model.parameters()).device
    target_in = ([config.bos_id] + list(output_ids[:-1]))[: config.max_len]
    src = pad([list(source_ids)], config.pad_id, device)
    tgt = pad([target_in], config.pad_id, device)
    layers = {"encoder_self": config.n_encoder_layers, "decoder_self": config.n_decoder_layers}
    layers["cross"] = config.n_decoder_layers
    raw: dict[str, list[np.ndarray]] = {f: [] for f in FAMILIES}
    value_norms: dict[str, list[np.ndarray]] = {f: [] for f in FAMILIES}
    for family in FAMILIES:
        for layer in range(layers[family]):
            result = model(src, tgt, inspect=(family, layer), head_mask=head_mask)
            inside = result.internals
            assert inside is not None, f"the model returned no internals for {family} layer {layer}"
            w_o = attention_module(model, family, layer).w_o.weight
            raw[family].append(inside.weights[0].float().cpu().numpy())
            value_norms[family].append(transformed_value_norms(inside.value[0], w_o).float().cpu().numpy())
    raw_arrays = {f: np.stack(raw[f]) for f in FAMILIES}
    norms_arrays = {f: np.stack(value_norms[f]) for f in FAMILIES}
    return ValueWeighted(
        SentenceAttention(**raw_arrays),
        {f: weight_by_values(raw_arrays[f], norms_arrays[f]) for f in FAMILIES},
        norms_arrays,
    )
