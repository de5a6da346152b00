"""Data layer: parallel corpora (uploads, Multi30k, synthetic tasks) and token-budget batching."""

from explorer.data.batching import Batch, collate, padding_fraction, token_budget_batches
from explorer.data.corpus import (
    CorpusError,
    ParallelCorpus,
    decode_text,
    is_placeholder,
    parallel_from_bytes,
    read_parallel,
    read_sentences,
    read_tsv,
    tsv_from_bytes,
)
from explorer.data.multi30k import (
    SPLITS as MULTI30K_SPLITS,
)
from explorer.data.multi30k import (
    DataUnavailableError,
    default_multi30k_root,
    load_multi30k,
    multi30k_available,
)
from explorer.data.synthetic import TASKS, Task, make_splits, make_task, task_description

__all__ = [
    "MULTI30K_SPLITS",
    "TASKS",
    "Batch",
    "CorpusError",
    "DataUnavailableError",
    "ParallelCorpus",
    "Task",
    "collate",
    "decode_text",
    "default_multi30k_root",
    "is_placeholder",
    "load_multi30k",
    "make_splits",
    "make_task",
    "multi30k_available",
    "padding_fraction",
    "parallel_from_bytes",
    "read_parallel",
    "read_sentences",
    "read_tsv",
    "task_description",
    "token_budget_batches",
    "tsv_from_bytes",
]
