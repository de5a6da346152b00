"""Text handling around the model: splitting a line into sentences before it, showing its pieces after."""

from explorer.text.pieces import shown_piece, shown_pieces
from explorer.text.sentences import SplitLines, join_sentences, split_lines, split_sentences

__all__ = ["SplitLines", "join_sentences", "split_lines", "split_sentences", "shown_piece", "shown_pieces"]
