"""`explorer translate --int8`: dynamically quantized feed-forward layers, within 0.3 BLEU of float."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.data import load_multi30k
from explorer.decoding.search import beam_search, greedy_search
from explorer.evaluation import corpus_scores
from explorer.fastpath.packed_decoding import packed_decoder, supports_packed
from explorer.inference import ModelScorer, PackedScorer, pad, scorer_for, translate
from explorer.quantize import is_quantized, quantize_int8, quantized_layer_names

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "checkpoints" / "multi30k-en-de"
VAL_SENTENCES = 200  # the validation subset CI uses


def test_quantized_copy_leaves_the_float_model_alone(words_checkpoint):
    c = load_checkpoint(words_checkpoint)
    before = {k: v.clone() for k, v in c.model.state_dict().items()}
    int8 = quantize_int8(c.model)
    assert is_quantized(int8) and not is_quantized(c.model)
    assert quantized_layer_names(c.model) and all("feed_forward" in n for n in quantized_layer_names(c.model))
    assert all(torch.equal(before[k], v) for k, v in c.model.state_dict().items())
    # int8 feed-forward blocks take the packed path too (fbgemm on their own prepacked weights)
    assert supports_packed(int8) and isinstance(scorer_for(int8, torch.tensor([[5, 6, c.config.eos_id]])), PackedScorer)
    sentences = ["a big dog rides a bicycle .", "the woman walks in the park ."]
    assert all(t.output for t in translate(int8, c.tokenizer, sentences, beam_size=2))


@pytest.mark.slow
def test_int8_bleu_within_0_3_of_float_on_validation(multi30k_root):
    if not (SHIPPED / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    c = load_checkpoint(SHIPPED, "cpu")
    val = load_multi30k("val", multi30k_root)
    sources, references = list(val.source[:VAL_SENTENCES]), list(val.target[:VAL_SENTENCES])
    float_bleu = corpus_scores(
        [t.output for t in translate(c.model, c.tokenizer, sources, beam_size=4)], references
    ).bleu
    int8_bleu = corpus_scores(
        [t.output for t in translate(quantize_int8(c.model), c.tokenizer, sources, beam_size=4)], references
    ).bleu
    assert abs(int8_bleu - float_bleu) <= 0.3, f"int8 {int8_bleu:.2f} vs float {float_bleu:.2f} BLEU"


def test_command_line_translates_with_int8(words_checkpoint, capsys):
    from explorer.cli import main

    sentences = ["a big dog rides a bicycle .", "the woman walks in the park ."]
    assert main(["translate", "-c", str(words_checkpoint), "--beam", "2", "--int8", *sentences]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(lines)


@torch.inference_mode()
def test_packed_int8_decoding_computes_what_the_int8_modules_do(words_checkpoint):
    """The packed path calls the int8 modules' own fbgemm operators (ReLU fused into the first): each step's
    log-probabilities equal the general path's to float32 rounding, and the searches find the same outputs."""
    c = load_checkpoint(words_checkpoint)
    int8, config = quantize_int8(c.model), c.config
    ids = [c.tokenizer.encode(s) + [config.eos_id] for s in ("a big dog rides a bicycle .", "the woman walks .")]
    src = pad(ids, config.pad_id, torch.device("cpu"))
    general = ModelScorer(int8, int8.start_decoding(int8.encode(src)))
    packed = scorer_for(int8, src)
    assert isinstance(packed, PackedScorer) and packed.decoder is packed_decoder(int8)
    torch.testing.assert_close(
        packed.decoder.start(int8.encode(src)).cross_kv, packed.cache.cross_kv, atol=1e-5, rtol=1e-5
    )
    tokens = torch.full((2,), config.bos_id)
    for step in range(4):
        expected, found = general.step(tokens, step), packed.step(tokens, step)
        torch.testing.assert_close(found, expected, atol=1e-4, rtol=1e-4, msg=f"step {step}")
        tokens = expected.argmax(-1)
    limits = [len(s) + 10 for s in ids]
    for search in (
        lambda scorer: [h.tokens for h in greedy_search(scorer, 2, config.bos_id, config.eos_id, limits)],
        lambda scorer: [
            r.hypotheses[0].tokens for r in beam_search(scorer, 2, 3, config.bos_id, config.eos_id, limits)
        ],
    ):
        assert search(scorer_for(int8, src)) == search(ModelScorer(int8, int8.start_decoding(int8.encode(src))))
