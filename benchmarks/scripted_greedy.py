"""One sentence decoded greedily by the scripted loop (`explorer/model/scripted_greedy.py`) ÷ the Python loop.

    python -m benchmarks.scripted_greedy [ROUNDS] [SENTENCES]

The shipped checkpoint, the first SENTENCES (default 100) of Multi30k test2016 (else the checkpoint's own
examples), one sentence at a time from source ids to a hypothesis (`scorer_for` + `greedy_search`, what
`translate()` runs for a typed sentence), 2 threads. Both ways in one process, alternating round by round
(`EXPLORER_SCRIPTED` is read at every sentence); each round's ratio is scripted ÷ Python time, and the median
of the ratios is printed with both medians. Also counted: sentences whose tokens and log-probabilities are the
same to the bit, and for reference the encoder and `start` alone (what neither loop changes).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

from explorer.checkpoint import load_checkpoint
from explorer.data import default_multi30k_root, load_multi30k
from explorer.decoding.search import greedy_search
from explorer.inference import encode_sources, scorer_for
from explorer.model.scripted_greedy import VARIABLE, scripted_loop

CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "multi30k-en-de"


def _sentences(count: int) -> list[str]:
    if default_multi30k_root() is not None:
        return list(load_multi30k("test2016").source[:count])
    return json.loads((CHECKPOINT / "examples.json").read_text(encoding="utf-8"))["en"][:count]


def main(rounds: int = 5, n: int = 100) -> int:
    torch.set_num_threads(2)
    loaded = load_checkpoint(CHECKPOINT, "cpu")
    config, model = loaded.config, loaded.model
    ids, _ = encode_sources(loaded.tokenizer, _sentences(n), config.max_len, config.eos_id)
    sources = [torch.tensor([s]) for s in ids]

    def decode(scripted: bool) -> list[tuple[tuple[int, ...], tuple[float, ...]]]:
        os.environ[VARIABLE] = "1" if scripted else "0"
        found = []
        for src in sources:
            scorer = scorer_for(model, src)
            (hypothesis,) = greedy_search(scorer, 1, config.bos_id, config.eos_id, src.shape[1] + 50)
            found.append((hypothesis.tokens, hypothesis.token_log_probs))
        return found

    if scripted_loop() is None:
        print("TorchScript could not compile the loop here: every sentence takes the Python loop")
        return 1
    times: dict[bool, list[float]] = {True: [], False: []}
    ratios = []
    with torch.inference_mode():
        reference, scripted = decode(False), decode(True)  # warm-up, and the comparison
        same = sum(a == b for a, b in zip(reference, scripted, strict=True))
        for index in range(rounds):
            order = (True, False) if index % 2 else (False, True)
            for way in order:
                start = time.perf_counter()
                decode(way)
                times[way].append((time.perf_counter() - start) / len(sources) * 1e3)
            ratios.append(times[True][-1] / times[False][-1])
        start = time.perf_counter()
        for src in sources:
            scorer_for(model, src)
        encoder = (time.perf_counter() - start) / len(sources) * 1e3
    os.environ.pop(VARIABLE, None)
    print(f"{len(sources)} sentences, greedy, one at a time, 2 threads, {rounds} alternating rounds")
    print(f"Python loop:   {statistics.median(times[False]):.2f} ms a sentence (rounds {_list(times[False])})")
    print(f"scripted loop: {statistics.median(times[True]):.2f} ms a sentence (rounds {_list(times[True])})")
    print(f"scripted ÷ Python, median of the rounds' ratios: {statistics.median(ratios):.3f}× ({_list(ratios, 3)})")
    print(f"encoder and start alone (neither loop): {encoder:.2f} ms a sentence")
    print(f"identical tokens and log-probabilities: {same}/{len(sources)}")
    return 0 if same == len(sources) else 1


def _list(values: list[float], digits: int = 2) -> str:
    return ", ".join(f"{v:.{digits}f}" for v in values)


if __name__ == "__main__":
    sys.exit(main(*(int(a) for a in sys.argv[1:3])))
