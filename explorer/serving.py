"""Many people pressing Translate at once: concurrent one-sentence requests decoded as one batch.

A classroom of forty pressing Translate within a few seconds sends forty one-sentence requests. Decoded one by
one, each pays the whole per-step overhead of the search and the model for a single row; decoded together,
forty rows share every step. `translate_served` is a drop-in for `explorer.inference.translate` in a server:
a one-sentence call joins a queue, one worker thread per model takes everything that has queued up while the
previous batch ran (continuous batching: a lone request starts at once, nobody waits for a timer) and
translates the requests that share options as one batch (`translate` sorts them by length and pads).
A typed line of a few sentences (the page splits it, explorer/text/sentences.py) joins the queue sentence by
sentence, so it shares batches with everyone else's; larger calls (batch uploads) run as they are, in the
calling thread.

Why batching and not one torch thread per request side by side: `python -m benchmarks.probes.classroom` measures
both against sequential requests (figures in benchmarks/RESULTS.md); see there.

Batched results equal one-by-one results up to float rounding in padded rows (the batching test in
tests/engine/test_inference.py holds the outputs equal).
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from explorer.inference import Translation, translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer

MAX_BATCH = 64  # rows per batch; more queued requests wait for the next one
MAX_QUEUED_CALL = 8  # sentences of one call that still go through the queue (a typed line); more run directly


@dataclass
class _Request:
    sentence: str
    options: tuple[tuple[str, Any], ...]
    done: threading.Event = field(default_factory=threading.Event)
    result: Translation | None = None
    error: BaseException | None = None


class BatchingTranslator:
    """One worker thread that translates queued one-sentence requests of one model in batches."""

    def __init__(self, model: Transformer, tokenizer: Tokenizer, max_batch: int = MAX_BATCH) -> None:
        self._model = weakref.ref(model)
        self._tokenizer = tokenizer
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work, name="explorer-batching", daemon=True)
        self._worker.start()

    def translate_one(self, sentence: str, **options: Any) -> Translation:
        """Translate `sentence` with `translate`'s keyword options, batched with concurrent callers."""
        return self.translate_many([sentence], **options)[0]

    def translate_many(self, sentences: Sequence[str], **options: Any) -> list[Translation]:
        """Translate a few sentences, each queued as its own request (so they share batches with concurrent
        callers); results in input order, the first error raised."""
        key = tuple(sorted(options.items()))
        requests = [_Request(sentence, key) for sentence in sentences]
        for request in requests:  # all queued before any wait: the worker sees them together
            self._queue.put(request)
        for request in requests:
            request.done.wait()
        for request in requests:
            if request.error is not None:
                raise request.error
        assert all(r.result is not None for r in requests), "the batching worker finished a request without a result"
        return [r.result for r in requests if r.result is not None]

    def _work(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=5.0)
            except queue.Empty:
                if self._model() is None:  # the model is gone: so is this worker
                    return
                continue
            batch = [first]
            while len(batch) < self._max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            groups: dict[tuple[tuple[str, Any], ...], list[_Request]] = {}
            for request in batch:
                groups.setdefault(request.options, []).append(request)
            for options, requests in groups.items():
                self._run(requests, dict(options))

    def _run(self, requests: list[_Request], options: dict[str, Any]) -> None:
        try:
            model = self._model()
            if model is None:
                raise RuntimeError("the model of this translator was released")
            found = translate(
                model, self._tokenizer, [r.sentence for r in requests], **{"batch_size": len(requests), **options}
            )
            for request, result in zip(requests, found, strict=False):
                request.result = result
        except BaseException as error:  # handed to every waiting caller, raised in its own thread
            for request in requests:
                request.error = error
        finally:
            for request in requests:
                request.done.set()


_TRANSLATORS: weakref.WeakKeyDictionary[Transformer, BatchingTranslator] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def batching_translator(model: Transformer, tokenizer: Tokenizer) -> BatchingTranslator:
    """The shared batching translator of `model` (one worker thread per model)."""
    with _LOCK:
        translator = _TRANSLATORS.get(model)
        if translator is None:
            translator = _TRANSLATORS[model] = BatchingTranslator(model, tokenizer)
        return translator


def translate_served(
    model: Transformer, tokenizer: Tokenizer, sentences: Sequence[str], **options: Any
) -> list[Translation]:
    """`explorer.inference.translate` for a server: calls of up to `MAX_QUEUED_CALL` sentences from concurrent
    requests are batched together."""
    if not 1 <= len(sentences) <= MAX_QUEUED_CALL or "progress" in options or "head_mask" in options:
        return translate(model, tokenizer, sentences, **options)
    return batching_translator(model, tokenizer).translate_many(sentences, **options)
