"""Find a sentence on which beam search and greedy decoding differ and write it into a checkpoint's examples.json.

With the first example sentence beam search (4 beams, α = 0.6, Section 6.1) found greedy's output, so the Beam
page and the tour's beam search stop could not show what the beam is for. This looks through validation
sentences (never test data) for the shortest on which the two differ, the beam's output scoring higher, and keeps
it under "beam" in examples.json:

    python -m checkpoints.recipes.beam_example checkpoints/multi30k-en-de --sentences ../shared/data/multi30k/val.en
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from explorer.analysis.beam import beam_differs
from explorer.checkpoint import load_checkpoint
from explorer.examples import BEAM_KEY, EXAMPLES_FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--sentences", type=Path, required=True, help="validation sentences, one a line")
    parser.add_argument("--limit", type=int, default=300, help="look at the first N sentences")
    parser.add_argument("--source-lang", default="en")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    checkpoint = load_checkpoint(args.checkpoint)
    lines = args.sentences.read_text(encoding="utf-8").splitlines()[: args.limit]
    found = beam_differs(checkpoint.model, checkpoint.tokenizer, [line.strip() for line in lines])
    if found is None:
        print("no sentence found on which beam search and greedy differ")
        return 1
    path = args.checkpoint / EXAMPLES_FILE
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data[BEAM_KEY] = {**data.get(BEAM_KEY, {}), args.source_lang: found}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{path}: beam example {found!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
