"""int8 for batch translation: the position-wise feed-forward layers quantized dynamically.

`torch.ao.quantization.quantize_dynamic` stores a `nn.Linear` weight as int8 with one scale per tensor and
quantizes its input on the fly, per batch. Which layers: on the first 200 Multi30k validation sentences
(beam 4, shipped checkpoint) quantizing every linear layer cost 0.41 BLEU (1.25 with per-channel scales),
the decoder's alone 0.41, the encoder's 0.34, all but W^Q/W^K 0.26, and the feed-forward layers alone
(Eq. 2, half of every layer's weights) +0.07. The attention projections stay in float32, as do embeddings,
LayerNorm and the tied output projection.

The quantized copy is for translating many sentences (`explorer translate --int8`); the attention views
always use the float model, whose weights they show. It decodes on the packed paths like the float model, its
feed-forward blocks on fbgemm (`explorer/fastpath/packing.py`): on the 2-core Intel Xeon,
1.07-1.08x faster than float32 in batches and 1.01-1.02x slower on one sentence, where on the general path it
had been 1.24-1.60x slower than float32 (`python -m benchmarks.probes.peers 3 300`, benchmarks/JOURNAL.md).
"""

from __future__ import annotations

import copy
import warnings

import torch
from torch import nn

from explorer.model import Transformer


def quantized_layer_names(model: Transformer) -> list[str]:
    """The linear layers `quantize_int8` turns to int8: every feed-forward W_1 and W_2."""
    return [
        name
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and ".feed_forward." in f".{name}"
    ]


def quantize_int8(model: Transformer) -> Transformer:
    """A copy of `model` (CPU, eval mode) with its feed-forward layers dynamically quantized; `model` is untouched."""
    float_copy = copy.deepcopy(model).to("cpu").eval()
    config = torch.ao.quantization.default_dynamic_qconfig
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao; the API still works
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*quantize_per_(tensor|channel).*deprecated")
        return torch.ao.quantization.quantize_dynamic(
            float_copy, {name: config for name in quantized_layer_names(float_copy)}, dtype=torch.qint8
        )


def is_quantized(model: nn.Module) -> bool:
    return any(type(m).__module__.startswith("torch.ao.nn.quantized") for m in model.modules())
