"""The recipe of the fixture checkpoints committed under tests/data/checkpoints, so app and engine tests do not
depend on shipped weights:

- reverse: the synthetic reverse task, whole-symbol vocabulary (crisp anti-diagonal cross-attention).
- words: a templated mini "English→German" task with a subword vocabulary, so words split into pieces.

The tests read the committed copies and never train these: a model this small and this briefly trained
translates differently when trained on another CPU (the reduction order differs), so weights trained at test
time made the suite's expected outputs depend on the machine. To write them again (after a change of the
checkpoint format or of the model), run

    python -m tests.fixture_models --out tests/data/checkpoints

and commit the result; tests/engine/test_fixture_recipe.py checks that the recipe still gives a loadable model
of the committed configuration.
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

import torch

from explorer.config import ModelConfig
from explorer.data import ParallelCorpus, make_splits
from explorer.tokenizer import Tokenizer
from explorer.training.trainer import TrainConfig, Trainer

# Where the tests read them from (tests/conftest.py copies them into each session's checkpoints folder).
COMMITTED = Path(__file__).resolve().parent / "data" / "checkpoints"
LEXICON = {
    "a": "ein",
    "the": "der",
    "man": "Mann",
    "dog": "Hund",
    "woman": "Frau",
    "child": "Kind",
    "rides": "fährt",
    "sees": "sieht",
    "walks": "läuft",
    "big": "großer",
    "small": "kleiner",
    "red": "roter",
    "bicycle": "Fahrrad",
    "street": "Straße",
    "park": "Park",
    "in": "im",
    "on": "auf",
}
SUBJECTS = ["a man", "a dog", "a woman", "a child", "the man", "the dog"]
ADJECTIVES = ["", "big ", "small ", "red "]
VERBS = ["rides", "sees", "walks"]
PLACES = ["in the park", "on the street", "a bicycle"]


def words_corpus(n: int, seed: int) -> ParallelCorpus:
    rng = random.Random(seed)
    source, target = [], []
    for _ in range(n):
        det, noun = rng.choice(SUBJECTS).split()
        sentence = f"{det} {rng.choice(ADJECTIVES)}{noun} {rng.choice(VERBS)} {rng.choice(PLACES)} ."
        source.append(sentence)
        target.append(" ".join(LEXICON.get(w, w) for w in sentence.split()))
    return ParallelCorpus(f"words (seed {seed})", tuple(source), tuple(target), 0)


def train_fixture(kind: str, out: Path, steps: int = 250) -> Path:
    if kind == "reverse":
        train, val = make_splits("reverse", 4000, 50, seed=0, max_len=8)
        tokenizer = Tokenizer.train(list(train.source) + list(train.target), 64, model_type="word")
    else:
        train, val = words_corpus(3000, 0), words_corpus(50, 1)
        tokenizer = Tokenizer.train(list(train.source) + list(train.target), 100, model_type="unigram")
    config = ModelConfig(
        vocab_size=tokenizer.vocab_size,
        d_model=32,
        n_heads=2,
        d_ff=64,
        n_encoder_layers=2,
        n_decoder_layers=2,
        dropout=0.0,
        max_len=48,
    )
    train_config = TrainConfig(
        steps=steps,
        batch_tokens=1024,
        warmup_steps=60,
        lr_scale=2.0,
        eval_every=0,
        save_every=0,
        bleu_sentences=0,
        device="cpu",
        max_len=48,
    )
    Trainer(config, train_config, tokenizer, train, val, out / f".run-{kind}", metadata={"fixture": kind}).run()
    final = out / f"{kind}-fixture"
    (out / f".run-{kind}" / "latest").rename(final)
    return final


KINDS = ("reverse", "words")


def write_fixtures(out: Path, kinds: tuple[str, ...] = KINDS) -> list[Path]:
    """Train each fixture into `out`/<kind>-fixture on one thread from seed 0 and keep only what a shipped
    checkpoint has (no optimizer state: nothing resumes a fixture)."""
    out.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the weights depend on the thread count (reduction order)
    written = []
    try:
        for kind in kinds:
            shutil.rmtree(out / f"{kind}-fixture", ignore_errors=True)
            torch.manual_seed(0)
            final = train_fixture(kind, out)
            (final / "optimizer.safetensors").unlink(missing_ok=True)
            shutil.rmtree(out / f".run-{kind}")
            written.append(final)
    finally:
        torch.set_num_threads(threads)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fixture_models", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write reverse-fixture/ and words-fixture/")
    parser.add_argument("--kind", choices=KINDS, action="append", help="only this fixture (repeatable)")
    args = parser.parse_args(argv)
    for path in write_fixtures(args.out, tuple(args.kind or KINDS)):
        print(path)


if __name__ == "__main__":
    main()
