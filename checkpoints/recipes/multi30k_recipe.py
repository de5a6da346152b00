"""Choose the shipped Multi30k model's recipe on the validation set only: which run, how many of its
last saves to average, then which beam width and length penalty α. test2016 is never read here.

    python -m checkpoints.recipes.multi30k_recipe /root/ae-runs2/d03 /root/ae-runs2/d01 \\
        --data ../shared/data/multi30k --averages 1 3 5 8 --beams 4 5 6 --alphas 0.6 0.8 1.0 1.2 1.4

Stage 1 scores every (run, N) with greedy decoding on all 1,014 validation sentences; stage 2 takes the best
and scores the beam × α grid. Both tables are printed as Markdown (pasted into the checkpoint card) and written
as JSON with --out.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from explorer.checkpoint import Checkpoint, average_weights, is_checkpoint, load_checkpoint, load_weights_into
from explorer.evaluation import Scores, corpus_scores
from explorer.inference import translate


@dataclass(frozen=True)
class AverageRow:
    run: str
    dropout: float
    last_step: int
    averaged: int
    val_bleu_greedy: float
    training_minutes: float


@dataclass(frozen=True)
class DecodingRow:
    beam: int
    alpha: float
    val_bleu: float
    val_bleu_lowercase: float


def saves_of(run: Path) -> list[Path]:
    """A run's step-N/ saves, oldest first; an exported checkpoint counts as one save, and a run stopped before
    its first step-N/ save as its latest/ (the recipe sweep stops runs by the clock)."""
    if is_checkpoint(run):  # an exported checkpoint (the starting point) counts as one save
        return [run]
    saves = sorted(p for p in run.glob("step-*") if is_checkpoint(p))  # step-0000150: zero-padded, sorts by step
    return saves or [p for p in [run / "latest"] if is_checkpoint(p)]


def load_average(saves: list[Path]) -> Checkpoint:
    """The last save, its model holding the average of `saves`' weights."""
    checkpoint = load_checkpoint(saves[-1])
    if len(saves) > 1:
        load_weights_into(checkpoint.model, average_weights(saves))
    return checkpoint


def bleu_of(checkpoint: Checkpoint, sources: list[str], references: list[str], beam: int, alpha: float) -> Scores:
    outputs = translate(checkpoint.model, checkpoint.tokenizer, sources, beam_size=beam, alpha=alpha)
    return corpus_scores([t.output for t in outputs], references)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories with step-N/ saves")
    parser.add_argument("--data", type=Path, required=True, help="folder with val.en and val.de")
    parser.add_argument("--averages", type=int, nargs="+", default=[1, 3, 5, 8])
    parser.add_argument("--beams", type=int, nargs="+", default=[4, 5, 6])
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.6, 0.8, 1.0, 1.2, 1.4])
    parser.add_argument("--upto", type=int, default=None, help="ignore saves after this step (compare runs alike)")
    parser.add_argument("--out", type=Path, default=None, help="write both tables here as JSON")
    args = parser.parse_args(argv)

    sources = (args.data / "val.en").read_text(encoding="utf-8").splitlines()
    references = (args.data / "val.de").read_text(encoding="utf-8").splitlines()
    averages: list[AverageRow] = []
    best: tuple[float, list[Path]] | None = None
    for run in args.runs:
        saves = [
            p
            for p in saves_of(run)
            if args.upto is None or not p.name.startswith("step-") or int(p.name[5:]) <= args.upto
        ]
        for n in args.averages:
            if n > len(saves):
                continue
            chosen = saves[-n:]
            checkpoint = load_average(chosen)
            started = time.perf_counter()
            bleu = bleu_of(checkpoint, sources, references, beam=1, alpha=0.6).bleu
            training = checkpoint.training or checkpoint.metadata.get("training", {})
            row = AverageRow(
                run.name,
                checkpoint.config.dropout,
                int(training.get("step", 0)),
                n,
                round(bleu, 2),
                round(float(training.get("elapsed_s", 0.0)) / 60, 1),
            )
            averages.append(row)
            print(f"{row}  ({time.perf_counter() - started:.0f}s)", flush=True)
            if best is None or bleu > best[0]:
                best = (bleu, chosen)
    if best is None:
        parser.error("no run has enough step-N/ saves")
    checkpoint = load_average(best[1])
    decodings: list[DecodingRow] = []
    for beam in args.beams:
        for alpha in args.alphas:
            scores = bleu_of(checkpoint, sources, references, beam=beam, alpha=alpha)
            decodings.append(DecodingRow(beam, alpha, round(scores.bleu, 2), round(scores.bleu_lowercase, 2)))
            print(decodings[-1], flush=True)

    print("\n| run | dropout | last step | saves averaged | val BLEU (greedy) | training (min) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in averages:
        print(
            f"| {r.run} | {r.dropout} | {r.last_step} | {r.averaged} | {r.val_bleu_greedy:.2f} | {r.training_minutes} |"
        )
    print(f"\nBest: the average of {', '.join(p.name for p in best[1])} of {best[1][0].parent.name}")
    print("\n| beam | α | val BLEU (cased) | val BLEU (lower-cased) |")
    print("| ---: | ---: | ---: | ---: |")
    for d in decodings:
        print(f"| {d.beam} | {d.alpha} | {d.val_bleu:.2f} | {d.val_bleu_lowercase:.2f} |")
    top = max(decodings, key=lambda d: (d.val_bleu, -d.beam))
    print(f"\nChosen decoding: beam {top.beam}, α {top.alpha} (val BLEU {top.val_bleu:.2f})")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "averages": [asdict(r) for r in averages],
                    "best_saves": [str(p) for p in best[1]],
                    "decodings": [asdict(d) for d in decodings],
                    "chosen": asdict(top),
                },
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
