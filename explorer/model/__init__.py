"""The Transformer of "Attention Is All You Need" (Section 3)."""

from explorer.model.attention import AttentionInternals, AttentionOutput, KeyValue, MultiHeadAttention
from explorer.model.head_mask import HeadMask, HeadMeans, HeadNameError
from explorer.model.positional import shift_matrix, sinusoidal_encoding, wavelengths
from explorer.model.transformer import (
    AttentionMaps,
    DecoderCache,
    EncoderOutput,
    ModelOutput,
    SentenceAttention,
    Transformer,
    causal_mask,
)

__all__ = [
    "AttentionInternals",
    "AttentionOutput",
    "KeyValue",
    "MultiHeadAttention",
    "HeadMask",
    "HeadMeans",
    "HeadNameError",
    "shift_matrix",
    "sinusoidal_encoding",
    "wavelengths",
    "AttentionMaps",
    "DecoderCache",
    "EncoderOutput",
    "ModelOutput",
    "SentenceAttention",
    "Transformer",
    "causal_mask",
]
