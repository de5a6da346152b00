"""Table 3, row (A), as attention: the tour's tiny pair (8 heads against 1 head with d_k = d_model, the same
parameters and cost; explorer/tour/variants.py) trained here in this process, and each model's encoder-decoder
attention on one held-out sentence stored, so the tour shows the two side by side at once.

Section 3.2.2: "With a single attention head, averaging inhibits this": one head must put one distribution over
the source for every query, while eight heads can each attend to a different place. The stored file holds, per
model, the top decoder layer's cross-attention (heads, target, source) with the reference target fed to both
(teacher forcing, so the two maps have the same rows), the final training loss, the validation loss and the
greedy output. Make it again with

    python -m explorer.tour.row_a_attention            # 1,500 steps each: about 4 CPU minutes
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from explorer.inference import attention_for, encode_sources, translate
from explorer.tour import stored
from explorer.tour.variants import ROWS, row_config, row_data, row_train_config
from explorer.training.trainer import Trainer

STORED = Path(__file__).resolve().parent / "data" / "row_a_attention.json"
STEPS = 1500
COMMAND = "python -m explorer.tour.row_a_attention"


@dataclass(frozen=True)
class HeadsRun:
    n_heads: int
    d_k: int
    train_loss: float  # the last logged training loss (label-smoothed)
    val_loss: float
    output: str  # greedy, for `RowAAttention.source`
    cross: np.ndarray  # (heads, target, source): the top decoder layer's encoder-decoder attention


@dataclass(frozen=True)
class RowAAttention:
    steps: int
    source: str
    source_pieces: list[str]
    target_pieces: list[str]  # the reference target, ending in </s>: both models are fed it (teacher forcing)
    runs: tuple[HeadsRun, ...]  # row (A)'s order: the base (8 heads) first


def train_and_record(steps: int = STEPS) -> RowAAttention:
    """Train each model of row (A) in this process on its data and record its attention on the first
    validation sentence, with the reference target fed to the decoder."""
    row = ROWS["A"]
    train, val, tokenizer = row_data(row)
    source, target = val.source[0], val.target[0]
    shape = row_config(row, row.variants[0], tokenizer.vocab_size)  # max_len and eos_id are the pair's
    (source_ids, target_ids), _ = encode_sources(tokenizer, [source, target], shape.max_len, shape.eos_id)
    runs = []
    for variant in row.variants:
        config = row_config(row, variant, tokenizer.vocab_size)
        h = config.n_heads
        trainer = Trainer(config, row_train_config(row, variant, steps), tokenizer, train, val, None)
        trainer.run()
        model = trainer.model.eval()
        with torch.inference_mode():
            output = translate(model, tokenizer, [source])[0].output
            attention = attention_for(model, [source_ids], [target_ids])[0]
        runs.append(
            HeadsRun(
                h,
                config.d_model // h,
                float(trainer.history["loss"][-1]),
                float(trainer.validation_loss()),
                output,
                attention.cross[-1],
            )
        )
    pieces = (tokenizer.pieces(source_ids), tokenizer.pieces(target_ids))
    return RowAAttention(steps, source, pieces[0], pieces[1], tuple(runs))


def save(record: RowAAttention, path: Path = STORED) -> None:
    data = {
        "steps": record.steps,
        "source": record.source,
        "source_pieces": record.source_pieces,
        "target_pieces": record.target_pieces,
        "command": COMMAND,
        "runs": [
            {
                "n_heads": r.n_heads,
                "d_k": r.d_k,
                "train_loss": round(r.train_loss, 4),
                "val_loss": round(r.val_loss, 4),
                "output": r.output,
                "cross": np.round(r.cross, 4).tolist(),
            }
            for r in record.runs
        ],
    }
    stored.write(path, data)


def load(path: Path = STORED) -> RowAAttention | None:
    """The stored record, or None when the file is absent."""
    data = stored.read(path)
    if data is None:
        return None
    runs = tuple(
        HeadsRun(
            int(r["n_heads"]),
            int(r["d_k"]),
            float(r["train_loss"]),
            float(r["val_loss"]),
            str(r["output"]),
            np.asarray(r["cross"], dtype=float),
        )
        for r in data["runs"]
    )
    return RowAAttention(int(data["steps"]), data["source"], data["source_pieces"], data["target_pieces"], runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--out", type=Path, default=STORED)
    args = parser.parse_args()
    record = train_and_record(args.steps)
    save(record, args.out)
    for run in record.runs:
        print(f"h={run.n_heads}: train loss {run.train_loss:.3f}, val loss {run.val_loss:.3f}, output {run.output!r}")


if __name__ == "__main__":
    main()
