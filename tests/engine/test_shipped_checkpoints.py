"""Every checkpoint shipped in checkpoints/ loads on the CPU and translates; the English→German model keeps its
quality on the first 200 test2016 sentences; everything shipped stays small enough to clone."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.checkpoint import decoding_settings, list_checkpoints, load_checkpoint
from explorer.data import load_multi30k
from explorer.evaluation import corpus_scores
from explorer.inference import translate

CHECKPOINTS = Path(__file__).resolve().parents[2] / "checkpoints"
SHIPPED = list_checkpoints(CHECKPOINTS)
TRANSLATOR = CHECKPOINTS / "multi30k-en-de"
# Cased sacreBLEU of the shipped model on all 1,000 test2016 sentences with its stored decoding (beam 5,
# α 1.6), minus 0.5: measured 39.72 with
# `explorer evaluate -c checkpoints/multi30k-en-de --source test2016.en --reference test2016.de` (card).
MIN_BLEU_TEST2016 = 39.22


def test_something_is_shipped():
    assert any(p.name == "toy-reverse" for p in SHIPPED)


def test_shipped_checkpoints_stay_under_40_mib():
    total = sum(f.stat().st_size for f in CHECKPOINTS.rglob("*") if f.is_file())
    assert total < 40 * 2**20, f"checkpoints/ holds {total / 2**20:.1f} MiB"


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_each_shipped_checkpoint_loads_on_cpu_and_translates(path):
    checkpoint = load_checkpoint(path, "cpu")
    assert (path / "README.md").is_file(), "every shipped model has a model card"
    sentence = "a b c d e f" if checkpoint.metadata.get("data") == "reverse" else "A man is riding a bike."
    (result,) = translate(checkpoint.model, checkpoint.tokenizer, [sentence], beam_size=4, with_attention=True)
    assert result.output.strip() and result.finished
    assert result.attention.cross.shape[-1] == len(result.source_pieces)


def test_toy_reverse_reverses_with_an_anti_diagonal():
    checkpoint = load_checkpoint(CHECKPOINTS / "toy-reverse")
    (result,) = translate(checkpoint.model, checkpoint.tokenizer, ["a b c d e f g h"], with_attention=True)
    assert result.output == "h g f e d c b a"
    last_layer = result.attention.cross[-1].mean(axis=0)  # (output, source) averaged over heads
    n = 8
    assert min(last_layer[i, n - 1 - i] for i in range(n)) > 0.9


@pytest.mark.slow
def test_translator_bleu_on_test2016_with_its_stored_decoding(multi30k_root):
    if not TRANSLATOR.is_dir():
        pytest.skip("no English→German checkpoint shipped yet")
    checkpoint = load_checkpoint(TRANSLATOR)
    stored = decoding_settings(checkpoint.metadata)
    assert stored is not None, "the shipped translator must store the beam and α chosen on validation"
    test = load_multi30k("test2016", multi30k_root)
    outputs = translate(
        checkpoint.model, checkpoint.tokenizer, list(test.source), beam_size=stored.beam, alpha=stored.alpha
    )
    bleu = corpus_scores([t.output for t in outputs], list(test.target)).bleu
    assert bleu >= MIN_BLEU_TEST2016, f"BLEU {bleu:.2f} on test2016 with beam {stored.beam}, α {stored.alpha}"
