"""The sentence the Beam page and the tour's beam search stop open on: one where beam search and greedy decoding
differ, so the search has something to show."""

from __future__ import annotations

from explorer.analysis.beam import beam_differs
from explorer.checkpoint import Checkpoint
from explorer.examples import beam_example
from ui.attention_view import checkpoint_examples
from ui.model_cache import cached
from ui.model_picker import Selection


def _search_examples(checkpoint: Checkpoint, path: str) -> str:
    """The shortest example sentence on which the two differ, else the first example."""
    sentences = checkpoint_examples(path, checkpoint.metadata).sentences
    return beam_differs(checkpoint.model, checkpoint.tokenizer, sentences) or sentences[0]


def beam_sentence(selection: Selection) -> str:
    """The checkpoint's shipped beam example (examples.json's "beam", found on validation data); else its example
    sentences searched once per checkpoint (cached) for one on which beam search and greedy differ; else its
    first example."""
    shipped = beam_example(selection.path)
    if shipped is not None:
        return shipped
    return cached("beam_example", selection, None, lambda ck: _search_examples(ck, selection.path))
