"""A larger stand-in checkpoint for the browser benchmark: the shipped model's tokenizer, width and examples, with
6 encoder and 6 decoder layers of 8 heads each and random weights (no such checkpoint is shipped).

Random weights rarely emit </s>, so its translations run to the length limit (input length + 50 pieces): the
decoder's share of the cost is an upper bound, not what a trained 6 x 8 model would show.
"""

from __future__ import annotations

from pathlib import Path

import torch

from benchmarks.common import SHIPPED_CHECKPOINT
from explorer.checkpoint import load_checkpoint, save_checkpoint
from explorer.model import Transformer

LAYERS, HEADS = 6, 8


def random_checkpoint(out: Path, source: Path = SHIPPED_CHECKPOINT, seed: int = 0) -> Path:
    """Write the stand-in to `out` (a checkpoint folder) and return it."""
    shipped = load_checkpoint(source)
    config = shipped.config.replace(n_encoder_layers=LAYERS, n_decoder_layers=LAYERS, n_heads=HEADS)
    torch.manual_seed(seed)
    model = Transformer(config).eval()
    examples = source / "examples.json"
    extra = {examples.name: examples.read_bytes()} if examples.is_file() else None
    metadata = {key: value for key, value in shipped.metadata.items() if key in ("data", "decoding")}
    metadata["stand_in"] = f"random weights, {LAYERS} layers x {HEADS} heads, {source.name}'s tokenizer"
    return save_checkpoint(out, model, shipped.tokenizer, metadata=metadata, extra_files=extra)
