"""Where decoding time goes, per cell (greedy / beam 4 × batches of 32 / one sentence), by cProfile.

    python -m benchmarks.probes.profile_search [N_SENTENCES] [--ops]

Splits the wall time of `explorer.inference.translate` on Multi30k test2016 into: encoder, decoder steps
(the model; for one sentence the whole search where it runs in one TorchScript call), cache reordering, top-k,
detokenisation, and the rest (the search's per-step Python, batching,
padding). Cumulative times of named functions, so the parts may overlap a little (top-k inside the search).
With `--ops`, each cell also lists the torch operators that took the most CPU time (torch.profiler), which
tells the matrix products (addmm: the layers' linears; mm: the output projection) from the rest.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks import command_line_runtime
from benchmarks.probes import add_sentences, parser

if TYPE_CHECKING:
    from explorer.model import Transformer
    from explorer.tokenizer import Tokenizer

command_line_runtime(__name__)  # before main() imports torch
REPO_ROOT = Path(__file__).resolve().parents[2]

# part -> (file fragment, function name) whose cumulative time is the part
PARTS = {
    "encoder": ("model/transformer.py", "encode"),
    "encoder (packed)": ("fastpath/packed_encoding.py", "encode"),
    "decoder steps (model)": ("model/transformer.py", "decode_step"),
    "decoder steps (packed model)": ("fastpath/packed_decoding.py", "step"),
    "one sentence's whole search (scripted)": ("fastpath/scripted_decoding.py", "beam"),
    "one sentence's greedy search (scripted)": ("fastpath/scripted_decoding.py", "greedy"),
    "cache reordering": ("model/attention.py", "select"),
    "cache reordering (packed)": ("fastpath/packed_cache.py", "select"),
    "top-k": ("~", "<method 'topk' of 'torch._C.TensorBase' objects>"),
    "detokenisation": ("tokenizer.py", "decode"),
    "pieces for labels": ("tokenizer.py", "pieces"),
}


def _cumulative(stats: pstats.Stats, fragment: str, name: str) -> float:
    total = 0.0
    for (filename, _, function), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if function == name and fragment in filename:
            total += cumulative
    return total


def profile_cell(
    model: Transformer, tokenizer: Tokenizer, sentences: list[str], beam: int, batch: int
) -> dict[str, float]:
    from explorer.inference import translate

    def work() -> None:
        if batch == 1:
            for sentence in sentences:
                translate(model, tokenizer, [sentence], beam_size=beam)
        else:
            translate(model, tokenizer, sentences, beam_size=beam, batch_size=batch)

    work()  # warm-up
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    work()
    profiler.disable()
    wall = time.perf_counter() - start
    stats = pstats.Stats(profiler)
    parts = {part: _cumulative(stats, *where) for part, where in PARTS.items()}
    named = sum(v for k, v in parts.items() if k != "top-k")
    parts["rest: search Python, batching"] = max(wall - named, 0.0)
    parts["wall"] = wall
    return parts


def top_ops(
    model: Transformer, tokenizer: Tokenizer, sentences: list[str], beam: int, batch: int, rows: int = 8
) -> list[str]:
    """The `rows` torch operators with the most self CPU time in one run of the cell, with their share."""
    from torch.profiler import profile

    from explorer.inference import translate

    with profile() as profiler:
        if batch == 1:
            for sentence in sentences:
                translate(model, tokenizer, [sentence], beam_size=beam)
        else:
            translate(model, tokenizer, sentences, beam_size=beam, batch_size=batch)
    events = sorted(profiler.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events) or 1.0
    return [
        f"{e.key:48s} {e.self_cpu_time_total / 1e6:7.3f} s  {e.self_cpu_time_total / total:6.1%}  {e.count:6d} calls"
        for e in events[:rows]
    ]


def main(n: int = 200, ops: bool = False) -> int:
    import torch

    from explorer.checkpoint import load_checkpoint
    from explorer.data import load_multi30k

    c = load_checkpoint(REPO_ROOT / "checkpoints" / "multi30k-en-de", "cpu")
    sentences = list(load_multi30k("test2016").source[:n])
    print(f"torch threads {torch.get_num_threads()}; {n} sentences (one-sentence cells: first {n // 4})")
    cells = {
        "greedy, batch 32": (1, 32, sentences),
        "beam 4, batch 32": (4, 32, sentences),
        "greedy, one sentence": (1, 1, sentences[: n // 4]),
        "beam 4, one sentence": (4, 1, sentences[: n // 4]),
    }
    for cell, (beam, batch, chosen) in cells.items():
        parts = profile_cell(c.model, c.tokenizer, chosen, beam, batch)
        wall = parts.pop("wall")
        print(f"\n{cell}: wall {wall:.2f} s under the profiler ({len(chosen)} sentences)")
        for part, seconds in parts.items():
            print(f"  {part:40s} {seconds:7.3f} s  {seconds / wall:6.1%}")
        if ops:
            print("  torch operators, self CPU time:")
            for line in top_ops(c.model, c.tokenizer, chosen, beam, batch):
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    command = parser("benchmarks.probes.profile_search", __doc__)
    add_sentences(command, 200)
    command.add_argument("--ops", action="store_true", help="also list the torch operators that took the most time")
    args = command.parse_args()
    sys.exit(main(args.sentences, ops=args.ops))
