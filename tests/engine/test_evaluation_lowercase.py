"""Lower-cased BLEU beside the cased score."""

from __future__ import annotations

import json

from explorer.cli import main
from explorer.evaluation import corpus_scores


def test_lowercase_bleu_ignores_case_and_names_it_in_the_signature():
    references = ["Ein Mann fährt Fahrrad .", "Zwei Hunde spielen im Schnee ."]
    hypotheses = ["ein mann fährt fahrrad .", "zwei hunde spielen im schnee ."]
    scores = corpus_scores(hypotheses, references)
    assert scores.bleu < 50 and round(scores.bleu_lowercase, 6) == 100.0
    assert "case:lc" in scores.bleu_lowercase_signature and "case:mixed" in scores.bleu_signature


def test_evaluate_prints_both_scores_and_the_decoding_used(reverse_checkpoint, tmp_path, capsys):
    (tmp_path / "src.txt").write_text("a b c\nd e f\n")
    (tmp_path / "ref.txt").write_text("c b a\nf e d\n")
    code = main(
        ["evaluate", "-c", str(reverse_checkpoint), "--source", str(tmp_path / "src.txt"),
         "--reference", str(tmp_path / "ref.txt"), "--beam", "2", "--alpha", "0.8"]
    )  # fmt: skip
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["beam"] == 2 and out["alpha"] == 0.8
    assert out["bleu_lowercase_signature"].startswith("nrefs:1|case:lc|")
