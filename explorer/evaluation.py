"""Translation quality with sacreBLEU (Post, 2018): BLEU and chrF computed the standard way, so figures
compare with published ones instead of with a home-made tokenizer's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sacrebleu


@dataclass(frozen=True)
class Scores:
    bleu: float  # cased, detokenized sacreBLEU (13a tokenizer)
    chrf: float
    bleu_signature: str
    chrf_signature: str
    n_sentences: int
    # Lower-cased BLEU (13a tokenizer), the casing most published Multi30k figures use; reported beside, never
    # instead of, the cased score.
    bleu_lowercase: float = float("nan")
    bleu_lowercase_signature: str = ""

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "bleu": round(self.bleu, 2),
            "chrf": round(self.chrf, 2),
            "sentences": self.n_sentences,
            "bleu_signature": self.bleu_signature,
            "chrf_signature": self.chrf_signature,
            "bleu_lowercase": round(self.bleu_lowercase, 2),
            "bleu_lowercase_signature": self.bleu_lowercase_signature,
        }


def corpus_scores(hypotheses: Sequence[str], references: Sequence[str]) -> Scores:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references; they must line up")
    if not hypotheses:
        raise ValueError("nothing to score: no sentences")
    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    bleu_score = bleu.corpus_score(list(hypotheses), [list(references)])
    chrf_score = chrf.corpus_score(list(hypotheses), [list(references)])
    lowercase = sacrebleu.metrics.BLEU(lowercase=True)
    lowercase_score = lowercase.corpus_score(list(hypotheses), [list(references)])
    return Scores(
        bleu_score.score,
        chrf_score.score,
        str(bleu.get_signature()),
        str(chrf.get_signature()),
        len(hypotheses),
        lowercase_score.score,
        str(lowercase.get_signature()),
    )
