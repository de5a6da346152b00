"""Translation on a real (fixture) model: greedy == beam 1, batching changes nothing, attention shapes line up
with the pieces, over-long input is cut with a flag."""

from __future__ import annotations

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate


def test_beam_one_equals_greedy_and_batching_is_invisible(words_checkpoint):
    c = load_checkpoint(words_checkpoint)
    sentences = ["a big dog rides a bicycle .", "the woman walks in the park .", "a child sees the red dog ."]
    greedy = translate(c.model, c.tokenizer, sentences, beam_size=1)
    beam_one = translate(c.model, c.tokenizer, sentences, beam_size=1, with_trace=True)
    one_by_one = [translate(c.model, c.tokenizer, [s], beam_size=3)[0].output for s in sentences]
    batched = [t.output for t in translate(c.model, c.tokenizer, sentences, beam_size=3, batch_size=2)]
    assert [t.output for t in greedy] == [t.output for t in beam_one]
    assert [t.score for t in greedy] == [t.score for t in beam_one]
    assert batched == one_by_one


def test_attention_shapes_match_pieces(words_checkpoint):
    c = load_checkpoint(words_checkpoint)
    (t,) = translate(c.model, c.tokenizer, ["a small dog walks on the street ."], beam_size=2, with_attention=True)
    layers, heads = c.config.n_encoder_layers, c.config.n_heads
    n_src, n_out = len(t.source_pieces), len(t.target_output_pieces)
    assert t.attention.encoder_self.shape == (layers, heads, n_src, n_src)
    assert t.attention.decoder_self.shape == (c.config.n_decoder_layers, heads, n_out, n_out)
    assert t.attention.cross.shape == (c.config.n_decoder_layers, heads, n_out, n_src)
    assert len(t.target_input_pieces) == n_out and t.target_input_pieces[0] == "<s>"


def test_overlong_input_is_truncated_with_a_flag(reverse_checkpoint):
    c = load_checkpoint(reverse_checkpoint)
    long_sentence = " ".join(["a"] * (c.config.max_len * 3))
    (t,) = translate(c.model, c.tokenizer, [long_sentence], beam_size=2)
    assert t.truncated and len(t.source_ids) == c.config.max_len
    assert len(t.output_ids) <= c.config.max_len


def test_empty_sentence_translates_without_crashing(reverse_checkpoint):
    c = load_checkpoint(reverse_checkpoint)
    (t,) = translate(c.model, c.tokenizer, [""], with_attention=True)
    assert t.source_pieces == ["</s>"] and not t.truncated
