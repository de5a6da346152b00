"""Write the search-output fixture `tests/data/search_reference_test2016.json`.

The fast search must give the same outputs as the search it replaced. This script ran once with the old
search (before any speed work) and its file is what `tests/fastpath/test_search_identical.py` compares with:
the first 200 Multi30k test2016 sentences through the shipped checkpoint, greedy and beam 4, batches of 32.

    python -m tests.data.make_search_reference       # rewrite the fixture (only when the search *should* change)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = REPO_ROOT / "tests" / "data" / "search_reference_test2016.json"
CHECKPOINT = REPO_ROOT / "checkpoints" / "multi30k-en-de"
N_SENTENCES = 200
SEARCHES = {"greedy": 1, "beam4": 4}


def reference_sentences() -> list[str]:
    from explorer.data import load_multi30k

    return list(load_multi30k("test2016").source[:N_SENTENCES])


def outputs(beam_size: int, sentences: list[str]) -> list[dict]:
    """Per sentence: output ids and the score/log-prob of the best hypothesis."""
    from explorer.checkpoint import load_checkpoint
    from explorer.inference import translate

    c = load_checkpoint(CHECKPOINT, "cpu")
    found = translate(c.model, c.tokenizer, sentences, beam_size=beam_size, batch_size=32)
    return [
        {"output_ids": t.output_ids, "score": t.score, "log_prob": t.log_prob, "finished": t.finished} for t in found
    ]


def main() -> int:
    sentences = reference_sentences()
    data = {
        "checkpoint": "checkpoints/multi30k-en-de",
        "split": "test2016",
        "sentences": sentences,
        "searches": {name: outputs(k, sentences) for name, k in SEARCHES.items()},
    }
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(data, ensure_ascii=False, indent=None) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(prog="python -m tests.data.make_search_reference", description=__doc__).parse_args()
    sys.exit(main())
