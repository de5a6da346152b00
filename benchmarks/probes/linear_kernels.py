"""MKL's addmm against oneDNN's prepacked linears on the shipped decoder's weights, as a decoding step uses them.

    python -m benchmarks.probes.linear_kernels [ROUNDS]

One "step" multiplies `rows` rows by every linear of the shipped checkpoint's decoder (fused W^Q/W^K/W^V,
W^O, cross W^Q and W^O, both feed-forward linears, three layers) and by the tied output projection: 19 MB of
float32 weights, more than the AMD EPYC's caches keep, so the figure is how fast each kernel reads them.
Rows: 1 (greedy, one sentence), 4 (beam 4, one sentence), 32 (greedy, a batch), 128 (beam 4, a batch).
Both kernels in one process, interleaved round by round; prints median microseconds per step and MKL ÷ oneDNN,
and the kernels the packed paths choose on this machine (`explorer/fastpath/linear_kernels.py`, measured: the
winner differs between CPUs).
"""

from __future__ import annotations

import statistics
import sys
import time

from benchmarks import command_line_runtime

command_line_runtime(__name__)

import torch

from benchmarks.common import SHIPPED_CHECKPOINT as CHECKPOINT
from benchmarks.probes import add_rounds, parser
from explorer.checkpoint import load_checkpoint
from explorer.fastpath.linear_kernels import MKL, ONEDNN, Kernels, choose_kernels

ROWS = (1, 4, 32, 128)


def _weights() -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    model = load_checkpoint(CHECKPOINT, "cpu").model
    out: list[tuple[torch.Tensor, torch.Tensor | None]] = []
    for layer in model.decoder_layers:
        s, c, f = layer.self_attention, layer.cross_attention, layer.feed_forward
        out.append(
            (torch.cat([s.w_q.weight, s.w_k.weight, s.w_v.weight]), torch.cat([s.w_q.bias, s.w_k.bias, s.w_v.bias]))
        )
        out += [(m.weight, m.bias) for m in (s.w_o, c.w_q, c.w_o, f.w_1, f.w_2)]
    out.append((model.embedding.weight, None))
    return [(w.detach().clone(), None if b is None else b.detach().clone()) for w, b in out]


def _step_time(
    kernels: Kernels, packed: list[tuple[tuple[torch.Tensor, torch.Tensor | None], int]], rows: int, repeats: int = 100
) -> float:
    inputs = {width: torch.randn(rows, width) for _, width in packed}

    def step() -> None:
        for (weight, bias), width in packed:
            kernels.apply(inputs[width], (weight, bias), False)

    step()
    start = time.perf_counter()
    for _ in range(repeats):
        step()
    return (time.perf_counter() - start) / repeats * 1e6


def main(rounds: int = 5) -> int:
    torch.set_num_threads(min(2, torch.get_num_threads()))
    weights = _weights()
    megabytes = sum(w.numel() + (0 if b is None else b.numel()) for w, b in weights) * 4 / 2**20
    packs = {
        name: [((k.pack(w), b), w.shape[1]) for w, b in weights] for name, k in (("MKL addmm", MKL), ("oneDNN", ONEDNN))
    }
    kernels = {"MKL addmm": MKL, "oneDNN": ONEDNN}
    times: dict[tuple[str, int], list[float]] = {}
    with torch.inference_mode():
        for r in range(rounds):
            for name in kernels if r % 2 == 0 else list(kernels)[::-1]:
                for rows in ROWS:
                    times.setdefault((name, rows), []).append(_step_time(kernels[name], packs[name], rows))
    threads = torch.get_num_threads()
    print(f"{megabytes:.1f} MB of decoder weights per step, {threads} threads, {rounds} rounds (median µs)")
    print("| rows | MKL addmm (µs) | oneDNN (µs) | MKL ÷ oneDNN |")
    print("|---:|---:|---:|---:|")
    for rows in ROWS:
        mkl, onednn = (statistics.median(times[(name, rows)]) for name in kernels)
        print(f"| {rows} | {mkl:.0f} | {onednn:.0f} | {mkl / onednn:.2f}× |")
    print(f"chosen by the packed paths here: {choose_kernels([w for w, _ in weights]).name}")
    return 0


if __name__ == "__main__":
    command = parser("benchmarks.probes.linear_kernels", __doc__)
    add_rounds(command, 5)
    sys.exit(main(command.parse_args().rounds))
