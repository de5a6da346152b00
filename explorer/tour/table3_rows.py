"""Table 3's rows (A), (B), (D) and (E) as numbers from this machine, beside the paper's: each row's tiny pair
(explorer/tour/variants.py) trained and scored the same way in this process (the stored results shipped with
the app) or in the background (a tour visitor's runs, scored when both end).

Per model: validation loss (per-token NLL, no smoothing) and perplexity, greedy BLEU and the share of validation
sequences reproduced exactly; for (E) also the exact share by sequence length, up to twice the longest length
seen in training, and the learned model's position table for the Positional encoding page. Make a row again with

    python -m explorer.tour.table3_rows --row B       # a few CPU minutes per row
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from explorer.checkpoint import load_checkpoint
from explorer.config import count_parameters
from explorer.data import ParallelCorpus, make_task
from explorer.data.batching import collate
from explorer.evaluation import corpus_scores
from explorer.inference import translate
from explorer.model import Transformer
from explorer.paper import TABLE3, Table3Row
from explorer.tokenizer import Tokenizer
from explorer.tour import stored
from explorer.tour.variants import ROWS, Row, row_config, row_data, row_train_config
from explorer.training import run_folder as rf
from explorer.training.batches import encode_pairs
from explorer.training.launcher import RunManager
from explorer.training.loss import token_nll

DATA = Path(__file__).resolve().parent / "data"
STEPS = {"A": 1500, "B": 1500, "D": 600, "E": 1500}  # the stored runs': longer than a visitor's background run
LONGEST_TESTED = 20  # (E): twice the longest training sequence
PER_LENGTH = 40  # (E): test sequences per length
# The paper's row each of ours stands for: (group, change) in explorer.paper.TABLE3.
PAPER_ROWS = {
    "A": ("(A)", "h=1, d_k=d_v=512"),
    "B": ("(B)", "d_k=16"),
    "D": ("(D)", "\u03b5_ls=0.0"),
    "E": ("(E)", "positional embedding instead of sinusoids"),
}


def command(letter: str) -> str:
    return f"python -m explorer.tour.table3_rows --row {letter}"


def stored_path(letter: str) -> Path:
    return DATA / f"row_{letter.lower()}.json"


def paper_rows(letter: str) -> tuple[Table3Row, Table3Row]:
    """The paper's base row and the row of its that `letter`'s variant stands for."""
    group, change = PAPER_ROWS[letter]
    return TABLE3[0], next(r for r in TABLE3 if (r.group, r.change) == (group, change))


@dataclass(frozen=True)
class VariantResult:
    label: str
    parameters: int
    steps: int
    val_loss: float  # per-token NLL without smoothing
    bleu: float  # greedy, on the validation set
    exact: float  # share of validation sequences reproduced exactly
    by_length: dict[int, float]  # (E): exact share by source length; empty for the other rows
    positions: np.ndarray | None  # (E), learned: (max_len, d_model) source position table; else None

    @property
    def perplexity(self) -> float:
        return math.exp(self.val_loss)


@dataclass(frozen=True)
class RowResult:
    letter: str
    task: str
    train_lengths: tuple[int, int]
    variants: tuple[VariantResult, VariantResult]  # the base first


@torch.inference_mode()
def validation_loss(model: Transformer, tokenizer: Tokenizer, val: ParallelCorpus) -> float:
    """Per-token NLL of `val`'s targets under teacher forcing, unsmoothed (as explorer.training.trainer)."""
    model.eval()
    config = model.config
    sources, targets = encode_pairs(tokenizer, val, config.max_len)
    total, count = 0.0, 0
    for start in range(0, len(sources), 64):
        batch = collate(
            [s + [config.eos_id] for s in sources[start : start + 64]],
            targets[start : start + 64],
            pad_id=config.pad_id,
            bos_id=config.bos_id,
            eos_id=config.eos_id,
        )
        logits = model(batch.src, batch.tgt_in).logits
        total += float(token_nll(logits, batch.tgt_out, pad_id=config.pad_id))
        count += batch.n_tgt_tokens
    return total / max(count, 1)


def exact_share(outputs: Sequence[str], references: Sequence[str]) -> float:
    return sum(o == r for o, r in zip(outputs, references, strict=True)) / max(len(references), 1)


def accuracy_by_length(model: Transformer, tokenizer: Tokenizer, row: Row) -> dict[int, float]:
    """Exact share of fresh sequences of each length from the row's shortest to LONGEST_TESTED (greedy)."""
    shares = {}
    for length in range(row.min_len, LONGEST_TESTED + 1):
        corpus = make_task(row.task, PER_LENGTH, min_len=length, max_len=length, seed=1000 + length)
        outputs = [t.output for t in translate(model, tokenizer, list(corpus.source), batch_size=64)]
        shares[length] = exact_share(outputs, corpus.target)
    return shares


def score(
    row: Row, index: int, model: Transformer, tokenizer: Tokenizer, val: ParallelCorpus, steps: int
) -> VariantResult:
    """One trained model of `row` (variant `index`) scored on the row's validation set (and lengths, for E)."""
    model.eval()
    with torch.inference_mode():
        outputs = [t.output for t in translate(model, tokenizer, list(val.source), batch_size=64)]
    learned = model.config.positional == "learned"
    return VariantResult(
        row.variants[index].label,
        count_parameters(model.config),
        steps,
        validation_loss(model, tokenizer, val),
        corpus_scores(outputs, list(val.target)).bleu,
        exact_share(outputs, val.target),
        accuracy_by_length(model, tokenizer, row) if row.letter == "E" else {},
        model.positional_table("source").detach().double().cpu().numpy() if learned else None,
    )


def train_row(letter: str, steps: int | None = None) -> RowResult:
    """Train the row's pair here, one after the other, and score both."""
    from explorer.training.trainer import Trainer  # the loop only where a row trains in this process

    row = ROWS[letter]
    steps = steps or STEPS[letter]
    train, val, tokenizer = row_data(row)
    results = []
    for index, variant in enumerate(row.variants):
        config = row_config(row, variant, tokenizer.vocab_size)
        trainer = Trainer(config, row_train_config(row, variant, steps), tokenizer, train, val, None)
        trainer.run()
        results.append(score(row, index, trainer.model, tokenizer, val, steps))
    return RowResult(letter, row.task, (row.min_len, row.max_len), (results[0], results[1]))


def score_runs(manager: RunManager, letter: str, names: Sequence[str]) -> RowResult | None:
    """Row `letter`'s background pair (explorer.tour.variants.start_row) scored like the stored one, from each
    run's last checkpoint; None until both runs have finished."""
    row = ROWS[letter]
    snaps = [manager.snapshot(name) for name in names]
    if len(snaps) != len(row.variants) or any(s is None or s.status != "finished" for s in snaps):
        return None
    _, val, _ = row_data(row)
    results = []
    for index, snap in enumerate(snaps):
        assert snap is not None
        latest = rf.latest_dir(snap.run_dir)
        if latest is None:
            return None
        checkpoint = load_checkpoint(latest)
        results.append(score(row, index, checkpoint.model, checkpoint.tokenizer, val, snap.step))
    return RowResult(letter, row.task, (row.min_len, row.max_len), (results[0], results[1]))


def save(result: RowResult, path: Path | None = None) -> Path:
    path = path or stored_path(result.letter)
    data = {
        "row": result.letter,
        "task": result.task,
        "train_lengths": list(result.train_lengths),
        "command": command(result.letter),
        "variants": [
            {
                "label": v.label,
                "parameters": v.parameters,
                "steps": v.steps,
                "val_loss": round(v.val_loss, 4),
                "bleu": round(v.bleu, 2),
                "exact": round(v.exact, 4),
                "by_length": {str(k): round(s, 4) for k, s in v.by_length.items()},
                "positions": None if v.positions is None else np.round(v.positions, 3).tolist(),
            }
            for v in result.variants
        ],
    }
    return stored.write(path, data)


def load(letter: str, path: Path | None = None) -> RowResult | None:
    """The stored result of row `letter`, or None when its file is absent."""
    path = path or stored_path(letter)
    data = stored.read(path)
    if data is None:
        return None
    variants = tuple(
        VariantResult(
            **{
                **v,
                "by_length": {int(k): float(s) for k, s in v["by_length"].items()},
                "positions": None if v["positions"] is None else np.asarray(v["positions"], dtype=float),
            }
        )
        for v in data["variants"]
    )
    low, high = data["train_lengths"]
    return RowResult(str(data["row"]), str(data["task"]), (int(low), int(high)), (variants[0], variants[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--row", choices=sorted(ROWS), required=True)
    parser.add_argument("--steps", type=int, default=None, help="training steps per model (default: the stored runs')")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: explorer/tour/data/)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = train_row(args.row, args.steps)
    path = save(result, args.out)
    for v in result.variants:
        lengths = " ".join(f"{k}:{s:.2f}" for k, s in v.by_length.items())
        print(
            f"row {result.letter} {v.label}: val loss {v.val_loss:.3f} (PPL {v.perplexity:.2f}), BLEU {v.bleu:.1f}, "
            f"exact {v.exact:.2f}, {v.parameters:,} parameters {lengths}".rstrip()
        )
    print(f"written to {path}")


if __name__ == "__main__":
    main()
