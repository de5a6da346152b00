"""Translating with attention heads switched off, for the callers that ablate heads (the Heads page, the
`explorer heads` command, head importance).

The mask is an argument of the decoding call (`explorer.inference.translate(head_mask=...)`): the one cached
`Transformer` is never changed, so other sessions are never affected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.inference import Translation, translate
from explorer.model.head_mask import HeadMask
from explorer.model.transformer import Transformer
from explorer.tokenizer import Tokenizer


def translate_with_heads(
    model: Transformer, tokenizer: Tokenizer, sentences: Sequence[str], head_mask: HeadMask | None, **options: Any
) -> list[Translation]:
    """`explorer.inference.translate` with `head_mask`'s heads off; nothing masked = exactly `translate`.

    The mask is checked against the model's shape first, so a mask for another model fails loudly.
    """
    mask = None if head_mask is None or head_mask.is_empty else head_mask.check(model.config)
    return translate(model, tokenizer, sentences, head_mask=mask, **options)
