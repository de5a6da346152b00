"""Named training data ("reverse", "copy", "multi30k", or files) and the tokenizer trained on it.

The command line and the app's train page both start here, so a run means the same thing in either.
"""

from __future__ import annotations

from pathlib import Path

from explorer.data import TASKS, ParallelCorpus, load_multi30k, make_splits, read_parallel, read_tsv
from explorer.data.corpus import require_training_pairs
from explorer.tokenizer import Tokenizer

SYNTHETIC_TRAIN_PAIRS, SYNTHETIC_VAL_PAIRS = 20_000, 500
VALIDATION_SHARE = 0.05  # held out of an uploaded corpus that comes without a validation set


def is_synthetic(data: str) -> bool:
    return data in TASKS


def split_off_validation(
    corpus: ParallelCorpus, share: float = VALIDATION_SHARE
) -> tuple[ParallelCorpus, ParallelCorpus]:
    """Hold out the last `share` of pairs (at least 1 pair, and never the whole corpus)."""
    n_val = min(max(1, int(len(corpus) * share)), max(len(corpus) - 1, 0))
    cut = len(corpus) - n_val
    train = ParallelCorpus(f"{corpus.name} (train)", corpus.source[:cut], corpus.target[:cut], corpus.dropped)
    val = ParallelCorpus(f"{corpus.name} (validation)", corpus.source[cut:], corpus.target[cut:], 0)
    return train, val


def load_corpora(
    data: str, *, seed: int = 0, multi30k_root: str | Path | None = None, synthetic_pairs: int = SYNTHETIC_TRAIN_PAIRS
) -> tuple[ParallelCorpus, ParallelCorpus]:
    """(train, validation) for a data spec.

    data: a synthetic task name (see explorer.data.TASKS), "multi30k", a TSV file, or "SRC_FILE,TGT_FILE".
    """
    if is_synthetic(data):
        return make_splits(data, synthetic_pairs, SYNTHETIC_VAL_PAIRS, seed)
    if data == "multi30k":
        return load_multi30k("train", multi30k_root), load_multi30k("val", multi30k_root)
    if "," in data:
        source, target = data.split(",", 1)
        corpora = split_off_validation(read_parallel(source, target))
    elif Path(data).suffix.lower() in (".tsv", ".tab"):
        corpora = split_off_validation(read_tsv(data))
    else:
        raise ValueError(
            f"unknown data {data!r}: use one of {sorted(TASKS)}, 'multi30k', a .tsv file, or 'source.txt,target.txt'"
        )
    # A corpus too small to split into train and validation is refused here, before any model is built.
    require_training_pairs(*corpora)
    return corpora


def train_tokenizer(corpus: ParallelCorpus, vocab_size: int, *, synthetic: bool = False) -> Tokenizer:
    """A joint SentencePiece vocabulary over both sides (Section 5.1); whole symbols for synthetic tasks."""
    return Tokenizer.train(
        list(corpus.source) + list(corpus.target), vocab_size, model_type="word" if synthetic else "unigram"
    )
