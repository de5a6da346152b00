"""Attention analysis: word-level merging and per-head statistics (numpy only)."""

from explorer.analysis.heads import head_entropy, head_summary, mean_attention_distance
from explorer.analysis.words import average_heads, merge_attention_to_words

__all__ = [
    "average_heads",
    "head_entropy",
    "head_summary",
    "mean_attention_distance",
    "merge_attention_to_words",
]
