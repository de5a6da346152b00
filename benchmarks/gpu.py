"""GPU: training throughput and model FLOP utilisation of the `base` preset in bf16 (vs nn.Transformer, and
as a fraction of the GPU's bf16 peak, both measured with a large bf16 matmul and from the published spec),
and the decoding figures (cache vs recompute). Skipped, with a printed line, when CUDA is absent.
"""

from __future__ import annotations

import dataclasses

import torch

from benchmarks import decoding, training
from benchmarks.common import Options, Result

NAME = "gpu"
TITLE = "GPU (CUDA, bf16)"


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    if not torch.cuda.is_available():
        result.skipped = (
            "CUDA is not available on this machine, so the GPU benchmarks (training tokens/s and "
            "FLOP utilisation of 'base' in bf16; decoding) did not run"
        )
        print(f"  {result.skipped}", flush=True)
        return result
    cuda = dataclasses.replace(opts, device="cuda")
    print(f"  device: {torch.cuda.get_device_name(0)}", flush=True)
    for part in (training, decoding):
        print(f"\n  -- {part.TITLE} --", flush=True)
        sub = part.run(cuda)
        for row in sub.rows:
            result.add(f"{part.TITLE.split(' (')[0].lower()}: {row.measure}", row.value, row.goal, row.met)
        result.notes.extend(sub.notes)
    return result
