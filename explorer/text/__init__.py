"""Text handling before the model sees it: splitting a line into sentences."""

from explorer.text.sentences import SplitLines, join_sentences, split_lines, split_sentences

__all__ = ["SplitLines", "join_sentences", "split_lines", "split_sentences"]
