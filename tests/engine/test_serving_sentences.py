"""A typed line of a few sentences goes through the server's batching queue sentence by sentence
(explorer/serving.py), so several people's multi-sentence lines share one batch."""

from __future__ import annotations

import threading
import time

import explorer.serving
from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from explorer.serving import batching_translator, translate_served
from tests.engine.test_serving import SENTENCES


def test_the_sentences_of_a_few_lines_share_one_batch(words_checkpoint, one_torch_thread, monkeypatch):
    """Three people translate a two-sentence line each while the worker is busy: the six sentences queue up
    and are translated as one batch, and each caller gets its own two translations in order."""
    c = load_checkpoint(words_checkpoint)
    translator = batching_translator(c.model, c.tokenizer)
    real, gate, batches = explorer.serving.translate, threading.Event(), []

    def gated(model, tokenizer, sentences, **options):
        batches.append(list(sentences))
        gate.wait(30)
        return real(model, tokenizer, sentences, **options)

    monkeypatch.setattr(explorer.serving, "translate", gated)
    busy = threading.Thread(target=translator.translate_one, args=("a dog .",))
    busy.start()
    while not batches:  # the worker holds the first request
        time.sleep(0.01)
    lines = [SENTENCES[0:2], SENTENCES[2:4], SENTENCES[4:6]]
    results: list = [None] * len(lines)

    def request(i: int) -> None:
        results[i] = translate_served(c.model, c.tokenizer, lines[i])

    threads = [threading.Thread(target=request, args=(i,)) for i in range(len(lines))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30  # before the fix the lines ran in their own threads and never queued
    while translator._queue.qsize() < len(SENTENCES) and time.monotonic() < deadline:
        time.sleep(0.01)
    gate.set()
    for t in [busy, *threads]:
        t.join()
    assert batches[0] == ["a dog ."] and sorted(batches[1]) == sorted(SENTENCES) and len(batches) == 2
    alone = {s: translate(c.model, c.tokenizer, [s])[0].output for s in SENTENCES}
    assert [[t.output for t in r] for r in results] == [[alone[s] for s in line] for line in lines]
