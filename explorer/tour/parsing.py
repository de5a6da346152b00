"""Section 6.3, English constituency parsing, made small: Table 4's numbers, the paper's decoding settings for it,
and a tiny model of the synthetic bracket task (explorer.data.synthetic: the output is a tree, longer than its
input) decoded under the translation's settings and the parser's. The stored results ship with the app; make
them again with

    python -m explorer.tour.parsing            # about a CPU minute
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from explorer.data import make_splits
from explorer.data.synthetic import TASKS, symbols
from explorer.inference import EXTRA_OUTPUT_TOKENS, translate
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.tour import stored
from explorer.tour.variants import Row, Variant, row_config, row_train_config

STORED = Path(__file__).resolve().parent / "data" / "parsing.json"
COMMAND = "python -m explorer.tour.parsing"
STEPS = 2500


@dataclass(frozen=True)
class Table4Row:
    parser: str
    training: str  # "WSJ only, discriminative", "semi-supervised", "multi-task", "generative"
    f1: float  # WSJ section 23


# Table 4 as the paper prints it: parser | training | WSJ 23 F1.
TABLE4_TEXT = """\
Vinyals & Kaiser et al. (2014) | WSJ only, discriminative | 88.3
Petrov et al. (2006) | WSJ only, discriminative | 90.4
Zhu et al. (2013) | WSJ only, discriminative | 90.4
Dyer et al. (2016) | WSJ only, discriminative | 91.7
Transformer (4 layers) | WSJ only, discriminative | 91.3
Zhu et al. (2013) | semi-supervised | 91.3
Huang & Harper (2009) | semi-supervised | 91.3
McClosky et al. (2006) | semi-supervised | 92.1
Vinyals & Kaiser et al. (2014) | semi-supervised | 92.1
Transformer (4 layers) | semi-supervised | 92.7
Luong et al. (2015) | multi-task | 93.0
Dyer et al. (2016) | generative | 93.3"""
TABLE4: tuple[Table4Row, ...] = tuple(
    Table4Row(parser, training, float(f1))
    for parser, training, f1 in (line.split(" | ") for line in TABLE4_TEXT.splitlines())
)
# Section 6.3: the parser's decoding against the translation's (Section 6.1).
PARSER_EXTRA, PARSER_BEAM, PARSER_ALPHA = 300, 21, 0.3
SHORT_EXTRA = 1
TRANSLATION_BEAM, TRANSLATION_ALPHA = 4, 0.6


@dataclass(frozen=True)
class Setting:
    extra: int  # maximum output length = input length + extra
    beam: int
    alpha: float


# A tree has at least 4 tokens more than its input (two brackets for the whole, two for a phrase): the limit
# input + SHORT_EXTRA cuts every one; then greedy, the translation's beam and the parser's.
SETTINGS: tuple[Setting, ...] = (
    Setting(SHORT_EXTRA, 1, TRANSLATION_ALPHA),
    Setting(EXTRA_OUTPUT_TOKENS, 1, TRANSLATION_ALPHA),
    Setting(EXTRA_OUTPUT_TOKENS, TRANSLATION_BEAM, TRANSLATION_ALPHA),
    Setting(PARSER_EXTRA, PARSER_BEAM, PARSER_ALPHA),
    Setting(PARSER_EXTRA, PARSER_BEAM, 1.0),
)
# The bracket model: the tour's tiny shape, room for a tree three times its input.
ROW = Row("parsing", "bracket", (Variant("bracket"),), STEPS, n_train=4000, min_len=3, max_len=10, max_positions=64)
# Inputs the stored results decode: two of the training lengths, one longer than any.
INPUTS = ("c f a b d", "b d e a c c h g", "a c b e g f h d i k j l")


@dataclass(frozen=True)
class Decoded:
    source: str
    reference: str
    extra: int
    beam: int
    alpha: float
    output: str

    @property
    def correct(self) -> bool:
        return self.output == self.reference

    @property
    def length(self) -> int:
        return len(self.output.split())


def reference(source: str) -> str:
    """The bracket task's tree for `source` (symbols of the task's alphabet, space-separated); empty when
    `source` has another word."""
    alphabet = symbols(26)
    if any(s not in alphabet for s in source.split()):
        return ""
    out = TASKS["bracket"].transform([alphabet.index(s) for s in source.split()])
    return " ".join({-1: "(", -2: ")"}.get(i) or alphabet[i] for i in out)


@torch.inference_mode()
def decode_grid(model: Transformer, tokenizer: Tokenizer, sources: Sequence[str]) -> list[Decoded]:
    """Each source decoded under every one of SETTINGS."""
    model.eval()
    found = []
    for setting in SETTINGS:
        outputs = translate(
            model,
            tokenizer,
            list(sources),
            beam_size=setting.beam,
            alpha=setting.alpha,
            max_extra_tokens=setting.extra,
        )
        found += [
            Decoded(s, reference(s), setting.extra, setting.beam, setting.alpha, o.output)
            for s, o in zip(sources, outputs, strict=True)
        ]
    return found


def train_and_decode(steps: int = STEPS) -> tuple[list[Decoded], float]:
    """Train the bracket model here and decode INPUTS; also its exact share on the validation set (greedy)."""
    from explorer.training.trainer import Trainer

    train, val = make_splits(ROW.task, ROW.n_train, ROW.n_val, seed=0, min_len=ROW.min_len, max_len=ROW.max_len)
    tokenizer = Tokenizer.train(list(train.source) + list(train.target), 40, model_type="word")
    variant = ROW.variants[0]
    trainer = Trainer(
        row_config(ROW, variant, tokenizer.vocab_size),
        row_train_config(ROW, variant, steps),
        tokenizer,
        train,
        val,
        None,
    )
    trainer.run()
    model = trainer.model.eval()
    with torch.inference_mode():
        outputs = [t.output for t in translate(model, tokenizer, list(val.source), batch_size=64)]
    exact = sum(o == r for o, r in zip(outputs, val.target, strict=True)) / len(val)
    return decode_grid(model, tokenizer, INPUTS), exact


def save(decoded: Sequence[Decoded], exact: float, steps: int, path: Path = STORED) -> None:
    data = {
        "command": COMMAND,
        "steps": steps,
        "train_lengths": [ROW.min_len, ROW.max_len],
        "val_exact": round(exact, 4),
        "decoded": [asdict(d) for d in decoded],
    }
    stored.write(path, data)


@dataclass(frozen=True)
class StoredParsing:
    steps: int
    train_lengths: tuple[int, int]
    val_exact: float
    decoded: tuple[Decoded, ...]


def load(path: Path = STORED) -> StoredParsing | None:
    data = stored.read(path)
    if data is None:
        return None
    low, high = data["train_lengths"]
    return StoredParsing(
        int(data["steps"]),
        (int(low), int(high)),
        float(data["val_exact"]),
        tuple(Decoded(**d) for d in data["decoded"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--out", type=Path, default=STORED)
    args = parser.parse_args()
    torch.set_num_threads(1)
    decoded, exact = train_and_decode(args.steps)
    save(decoded, exact, args.steps, args.out)
    print(f"validation exact {exact:.2f}")
    for d in decoded:
        mark = "ok" if d.correct else "--"
        print(f"{mark} +{d.extra} beam {d.beam} alpha {d.alpha}: {d.source!r} -> {d.output!r}")


if __name__ == "__main__":
    main()
