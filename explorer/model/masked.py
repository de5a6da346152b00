"""The shared model seen through one head mask, for code that drives the model without a `head_mask`
argument of its own (the search and `explorer.inference.translate`).

A `MaskedModel` is a new, throw-away view per call: it forwards to the one cached `Transformer` and adds
the mask to every call, so the model itself is never changed and other sessions are never affected.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from explorer.config import ModelConfig
from explorer.model.head_mask import HeadMask
from explorer.model.transformer import DecoderCache, EncoderOutput, ModelOutput, Transformer


class MaskedModel:
    """Duck-types the parts of `Transformer` that decoding uses: config, parameters, encode, decode_step, call."""

    def __init__(self, model: Transformer, head_mask: HeadMask) -> None:
        self.model, self.head_mask = model, head_mask.check(model.config)

    @property
    def config(self) -> ModelConfig:
        return self.model.config

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.model.parameters()

    def _mask(self, kwargs: dict) -> HeadMask:
        """A caller that passes its own head_mask must pass this view's (or None)."""
        given = kwargs.pop("head_mask", None)
        if given is not None and given is not self.head_mask:
            raise ValueError("a MaskedModel already carries a head mask; do not pass another one")
        return self.head_mask

    def encode(self, src: torch.Tensor, **kwargs) -> EncoderOutput:
        return self.model.encode(src, head_mask=self._mask(kwargs), **kwargs)

    def start_decoding(self, encoded: EncoderOutput) -> DecoderCache:
        return self.model.start_decoding(encoded)

    def decode_step(self, tokens: torch.Tensor, cache: DecoderCache, **kwargs) -> tuple[torch.Tensor, DecoderCache]:
        return self.model.decode_step(tokens, cache, head_mask=self._mask(kwargs), **kwargs)

    def __call__(self, src: torch.Tensor, tgt_in: torch.Tensor, **kwargs) -> ModelOutput:
        return self.model(src, tgt_in, head_mask=self._mask(kwargs), **kwargs)


def with_heads(model: Transformer, head_mask: HeadMask | None) -> Transformer | MaskedModel:
    """The model itself when nothing is masked (so `--heads none` is exactly the unmasked path)."""
    if head_mask is None or head_mask.is_empty:
        return model
    return MaskedModel(model, head_mask)


def translate_with_heads(model: Transformer, tokenizer, sentences, head_mask: HeadMask | None, **options):
    """`explorer.inference.translate` with `head_mask`'s heads off; nothing masked = exactly `translate`.

    Passes the mask to `translate` when it takes one (the decoding code's own argument), else decodes through
    a `MaskedModel` view.
    """
    import inspect

    from explorer.inference import translate

    mask = None if head_mask is None or head_mask.is_empty else head_mask.check(model.config)
    if mask is None:
        return translate(model, tokenizer, sentences, **options)
    if "head_mask" in inspect.signature(translate).parameters:
        return translate(model, tokenizer, sentences, head_mask=mask, **options)
    return translate(MaskedModel(model, mask), tokenizer, sentences, **options)
