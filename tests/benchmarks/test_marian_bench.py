"""Smoke test of benchmarks/marian.py at a tiny shape: a random MarianMTModel saved by transformers is imported,
loaded, timed on the 20-word sentence with every attention map, and the memory of a process holding it read."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers", reason="the Marian benchmark builds its model with transformers")

from benchmarks import BENCHMARKS, load  # noqa: E402
from benchmarks.common import Options  # noqa: E402


@pytest.mark.usefixtures("one_torch_thread")
def test_the_marian_benchmark_gives_every_row_at_a_tiny_shape():
    assert BENCHMARKS["marian"] == "benchmarks.marian"
    module = load("marian")
    assert len(module.SENTENCE.split()) == 20
    result = module.run(Options(quick=True, threads=1))
    measures = {row.measure: row.value for row in result.rows}
    assert measures["explorer import (Hugging Face folder -> checkpoint)"].endswith(" s")
    assert measures["load_checkpoint (median)"].endswith(" s")
    for name in ("p50", "p95"):
        assert measures[f"one 20-word sentence + all attention maps: {name}"].endswith(" ms")
    memory = measures["resident memory, the app's libraries + the model loaded + one sentence"]
    assert memory.endswith(")") and "GB" in memory
    assert all(row.met is None for row in result.rows), "a tiny model is not judged against the goals"
