"""One sentence decoded with TorchScript (`explorer/fastpath/scripted_decoding.py`) ÷ with the Python steps.

    python -m benchmarks.probes.scripted_decoding [ROUNDS] [SENTENCES]

The shipped checkpoint, the first SENTENCES (default 100) of Multi30k test2016 (else the checkpoint's own
examples), one sentence at a time from source ids to a hypothesis (`scorer_for` + `greedy_search`, what
`translate()` runs for a typed sentence), greedy (the scripted loop) and beam 4 (scripted steps), and the same
sentences in batches of 32 (`explorer translate`'s batches; scripted steps), 2 threads.
Both ways in one process, alternating round by round (`EXPLORER_SCRIPTED` is read at every step); each round's
ratio is scripted ÷ Python time, and the median of the ratios is printed with both medians. Also counted:
sentences whose hypotheses (tokens, log-probabilities, scores) are the same to the bit, and for reference the
encoder and `start` alone (what neither way changes).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from benchmarks import command_line_runtime

command_line_runtime(__name__)

import torch

from benchmarks.common import SHIPPED_CHECKPOINT, sample_sentences
from benchmarks.probes import rounds_and_sentences
from explorer.checkpoint import load_checkpoint
from explorer.decoding.search import beam_search, greedy_search
from explorer.fastpath.scripted_decoding import VARIABLE, scripted
from explorer.inference import encode_sources, pad, scorer_for

if TYPE_CHECKING:
    from explorer.decoding.search import BeamResult, Hypothesis

BATCH = 32


def main(rounds: int = 5, n: int = 100) -> int:
    torch.set_num_threads(2)
    before = os.environ.get(VARIABLE)  # restored at the end: the benchmark sets it for each way
    loaded = load_checkpoint(SHIPPED_CHECKPOINT, "cpu")
    config, model = loaded.config, loaded.model
    ids, _ = encode_sources(loaded.tokenizer, sample_sentences(n), config.max_len, config.eos_id)
    sources = [torch.tensor([s]) for s in ids]

    def greedy(src: torch.Tensor) -> object:
        (found,) = greedy_search(scorer_for(model, src), 1, config.bos_id, config.eos_id, src.shape[1] + 50)
        return found

    def beam(src: torch.Tensor) -> object:
        (found,) = beam_search(scorer_for(model, src), 1, 4, config.bos_id, config.eos_id, src.shape[1] + 50)
        return found

    batches = [pad(ids[i : i + BATCH], config.pad_id, torch.device("cpu")) for i in range(0, len(ids), BATCH)]

    def greedy_batches(src: torch.Tensor) -> list[Hypothesis]:
        return greedy_search(scorer_for(model, src), src.shape[0], config.bos_id, config.eos_id, src.shape[1] + 50)

    def beam_batches(src: torch.Tensor) -> list[BeamResult]:
        return beam_search(scorer_for(model, src), src.shape[0], 4, config.bos_id, config.eos_id, src.shape[1] + 50)

    def decode(search: Callable[[torch.Tensor], object], scripted: bool) -> list[object]:
        """Each sentence's hypothesis (or beam result), decoded one at a time or in batches."""
        os.environ[VARIABLE] = "1" if scripted else "0"
        if search in (greedy_batches, beam_batches):
            return [found for src in batches for found in cast(list[object], search(src))]
        return [search(src) for src in sources]

    if scripted() is None:
        print("TorchScript could not compile the functions here: every sentence takes the Python steps")
        return 1
    print(
        f"{len(sources)} sentences, 2 threads, {rounds} alternating rounds; ms a sentence (batches: time ÷ sentences)"
    )
    print("| cell | Python steps | scripted | scripted ÷ Python (median of the rounds' ratios) | identical |")
    print("|---|---:|---:|---:|---:|")
    all_same = True
    with torch.inference_mode():
        cells = (
            ("greedy, one sentence", greedy),
            ("beam 4, one sentence", beam),
            (f"greedy, batches of {BATCH}", greedy_batches),
            (f"beam 4, batches of {BATCH}", beam_batches),
        )
        for name, search in cells:
            reference, found = decode(search, False), decode(search, True)  # warm-up, and the comparison
            same = sum(a == b for a, b in zip(reference, found, strict=True))
            all_same &= same == len(reference)
            times: dict[bool, list[float]] = {True: [], False: []}
            ratios = []
            for index in range(rounds):
                for way in (True, False) if index % 2 else (False, True):
                    start = time.perf_counter()
                    decode(search, way)
                    times[way].append((time.perf_counter() - start) / len(sources) * 1e3)
                ratios.append(times[True][-1] / times[False][-1])
            print(
                f"| {name} | {statistics.median(times[False]):.2f} | {statistics.median(times[True]):.2f} "
                f"| {statistics.median(ratios):.3f}× ({_list(ratios, 3)}) | {same}/{len(reference)} |"
            )
        start = time.perf_counter()
        for src in sources:
            scorer_for(model, src)
        encoder = (time.perf_counter() - start) / len(sources) * 1e3
    if before is None:
        os.environ.pop(VARIABLE, None)
    else:
        os.environ[VARIABLE] = before
    print(f"encoder and start alone (the same either way): {encoder:.2f} ms a sentence")
    return 0 if all_same else 1


def _list(values: list[float], digits: int = 2) -> str:
    return ", ".join(f"{v:.{digits}f}" for v in values)


if __name__ == "__main__":
    args = rounds_and_sentences("benchmarks.probes.scripted_decoding", __doc__, rounds=5, sentences=100)
    sys.exit(main(args.rounds, args.sentences))
