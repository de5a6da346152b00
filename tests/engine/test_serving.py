"""Concurrent one-sentence requests through `explorer.serving.translate_served`: batched, same answers."""

from __future__ import annotations

import threading

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from explorer.serving import batching_translator, translate_served

SENTENCES = [
    "a big dog rides a bicycle .",
    "the woman walks in the park .",
    "a child sees the red dog .",
    "a man sits on a bench .",
    "two dogs run in the snow .",
    "a girl plays with a ball .",
]


def _concurrently(call, sentences):
    results = [None] * len(sentences)
    barrier = threading.Barrier(len(sentences))

    def request(i):
        barrier.wait()
        results[i] = call(sentences[i])

    threads = [threading.Thread(target=request, args=(i,)) for i in range(len(sentences))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_concurrent_requests_get_their_own_translations_with_attention(words_checkpoint, one_torch_thread):
    c = load_checkpoint(words_checkpoint)
    alone = [translate(c.model, c.tokenizer, [s], with_attention=True)[0] for s in SENTENCES]
    served = _concurrently(lambda s: translate_served(c.model, c.tokenizer, [s], with_attention=True), SENTENCES)
    assert [r[0].source for r in served] == SENTENCES
    assert [r[0].output for r in served] == [t.output for t in alone]
    assert all(r[0].attention.cross.shape == t.attention.cross.shape for r, t in zip(served, alone, strict=False))


def test_requests_with_different_options_are_not_mixed(words_checkpoint, one_torch_thread):
    c = load_checkpoint(words_checkpoint)
    beams = [1, 3, 1, 3, 1, 3]
    served = _concurrently(
        lambda i: translate_served(c.model, c.tokenizer, [SENTENCES[i]], beam_size=beams[i], n_best=beams[i]),
        list(range(len(SENTENCES))),
    )
    assert [len(r[0].nbest) for r in served] == beams


def test_an_error_reaches_the_caller_and_the_worker_keeps_serving(words_checkpoint, one_torch_thread):
    c = load_checkpoint(words_checkpoint)
    translator = batching_translator(c.model, c.tokenizer)
    with pytest.raises(ValueError, match="beam_size"):
        translator.translate_one("a dog .", beam_size=0)
    assert translator.translate_one("a dog .").output == translate(c.model, c.tokenizer, ["a dog ."])[0].output
