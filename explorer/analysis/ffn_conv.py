"""The position-wise feed-forward network as two convolutions with kernel size 1 (Section 3.3).

"Another way of describing this is as two convolutions with kernel size 1." A kernel-1 convolution over the
positions applies the same d_in -> d_out map at every position, which is what the FFN's two linear layers
do. `conv_equivalence` checks it on the loaded model: every encoder layer's FFN, fed the hidden states it
actually receives for a sentence, computed once as the model does (x W₁ + b₁, ReLU, W₂ + b₂) and once with
`torch.nn.functional.conv1d` and the same weights reshaped to (out, in, 1) kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from explorer.inference import encode_sources
from explorer.model.layers import PositionwiseFeedForward
from explorer.model.transformer import Transformer
from explorer.tokenizer import Tokenizer


@dataclass(frozen=True)
class ConvCheck:
    layers: int  # encoder layers checked
    positions: int  # the sentence's tokens, each one position of the convolution
    d_model: int
    d_ff: int
    max_abs_difference: float  # largest |linear FFN - two kernel-1 convolutions| over layers, positions, features
    max_abs_output: float  # the FFN outputs' largest magnitude, for scale


def as_convolutions(ffn: PositionwiseFeedForward, x: torch.Tensor) -> torch.Tensor:
    """x (batch, length, d_model) -> (batch, length, d_model) through conv1d with the FFN's weights as kernels
    of size 1: conv1d wants (batch, channels, length), so the features become the channels."""
    channels = x.transpose(1, 2)
    hidden = F.relu(F.conv1d(channels, ffn.w_1.weight.unsqueeze(-1), ffn.w_1.bias))
    return F.conv1d(hidden, ffn.w_2.weight.unsqueeze(-1), ffn.w_2.bias).transpose(1, 2)


@torch.inference_mode()
def conv_equivalence(model: Transformer, tokenizer: Tokenizer, sentence: str) -> ConvCheck:
    """Each encoder layer's FFN on its real input for `sentence`, as linear layers and as kernel-1 convolutions."""
    if model.training:
        raise ValueError("conv_equivalence needs the model in eval mode: dropout would change the inputs")
    config = model.config
    (ids,), _ = encode_sources(tokenizer, [sentence], config.max_len, config.eos_id)
    src = torch.tensor([ids], device=next(model.parameters()).device)
    mask = (src != config.pad_id).view(1, 1, 1, src.shape[1])
    x = model.embedding(src) * model.embedding_scale + model.positional_table("source")[: src.shape[1]]
    difference, largest = 0.0, 0.0
    for layer in model.encoder_layers:
        # The FFN's input is the attention sub-layer's output after its residual and norm (Figure 1).
        x = layer.attention_residual(x, lambda h, layer=layer: layer.self_attention(h, h, mask).output)
        linear, conv = layer.feed_forward(x), as_convolutions(layer.feed_forward, x)
        difference = max(difference, float((linear - conv).abs().max()))
        largest = max(largest, float(linear.abs().max()))
        x = layer.ffn_residual(x, layer.feed_forward)
    return ConvCheck(len(model.encoder_layers), src.shape[1], config.d_model, config.d_ff, difference, largest)
