"""What a checkpoint records about how it was trained, set beside the paper's recipe: Adam's settings (Section
5.3), dropout (5.4), whether the weights are an average of saved checkpoints (6.1), and its training time and
hardware, turned into FLOPs the way Section 6.1 does for Table 2.

Every function reads the checkpoint's metadata (config.json) and returns None where it records nothing: the UI
then says so instead of guessing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from explorer.i18n import translate
from explorer.paper import PAPER_ADAM, PAPER_DROPOUT, TABLE2, training_flops


def _train_config(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    return (metadata.get("training") or {}).get("train_config") or {}


def adam_of(metadata: Mapping[str, Any]) -> tuple[float, float, float] | None:
    """(β₁, β₂, ε) the checkpoint was trained with, or None."""
    recorded = _train_config(metadata)
    try:
        return float(recorded["adam_beta1"]), float(recorded["adam_beta2"]), float(recorded["adam_eps"])
    except KeyError:
        return None


def averaged_from(metadata: Mapping[str, Any]) -> list[str]:
    """The saved checkpoints whose weights were averaged into this one (export --average); empty when none."""
    sources = metadata.get("exported_from") or []
    return [str(s) for s in sources] if isinstance(sources, list) else []


def averaged_steps(metadata: Mapping[str, Any]) -> list[int]:
    """The training steps of the averaged saves, read from their folder names (".../step-0005550" -> 5550)."""
    steps = []
    for source in averaged_from(metadata):
        name = source.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("step-") and name[5:].isdigit():
            steps.append(int(name[5:]))
    return steps


@dataclass(frozen=True)
class MeasuredCost:
    """A checkpoint's recorded training time and hardware."""

    seconds: float
    devices: int  # processes (GPUs) that trained together
    device: str  # "cuda", "cpu", ... as recorded
    steps: int | None

    def flops(self, flops_per_device: float) -> float:
        return training_flops(self.seconds, self.devices, flops_per_device)


def measured_cost(metadata: Mapping[str, Any]) -> MeasuredCost | None:
    training = metadata.get("training") or {}
    if "elapsed_s" not in training:
        return None
    steps = training.get("step")
    return MeasuredCost(
        float(training["elapsed_s"]),
        int(training.get("world_size") or 1),
        str(training.get("device") or _train_config(metadata).get("device") or "?"),
        int(steps) if steps else None,
    )


# Sustained single-precision throughput of the GPUs a checkpoint of this project may have been trained on
# (FP32 without tensor cores, the figure footnote 5 uses for its GPUs): the vendors' data sheets.
MODERN_GPU_FLOPS: dict[str, float] = {"NVIDIA H100": 67e12, "NVIDIA H200": 67e12}


@torch.inference_mode()
def cpu_flops(size: int = 512, repeats: int = 5) -> float:
    """This machine's measured float32 matrix-product throughput (FLOP/s): the best of `repeats` products of
    two size × size matrices, each 2·size³ operations."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def base_model_seconds_here(flops_per_second: float) -> float:
    """How long Table 2's base model (3.3·10^18 FLOPs) would train at this throughput."""
    base = next(r for r in TABLE2 if r.model == "Transformer (base model)")
    assert base.flops_en_de is not None, "Table 2 gives the base model's cost"
    return base.flops_en_de / flops_per_second


SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def power_text(value: float, digits: int = 1) -> str:
    """3.3e18 -> "3.3·10¹⁸", 1e-9 -> "10⁻⁹": the paper's way of writing large and small numbers."""
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    power = "10" + str(int(exponent)).translate(SUPERSCRIPT)
    return power if float(mantissa) == 1.0 and digits == 0 else f"{mantissa}\u00b7{power}"


def adam_text(adam: tuple[float, float, float]) -> str:
    beta1, beta2, eps = adam
    return f"\u03b2\u2081 = {beta1:g}, \u03b2\u2082 = {beta2:g}, \u03b5 = {power_text(eps, 0)}"


def optimizer_and_dropout(adam: tuple[float, float, float] | None, dropout: float | None, lang: str = "en") -> str:
    """Adam's settings and dropout's places (Sections 5.3, 5.4), the paper's beside this model's where known."""
    ours = (
        translate("this model: {adam}", lang, adam=adam_text(adam))
        if adam is not None
        else translate("this model's are not recorded", lang)
    )
    optimizer = translate(
        "Optimizer (Section 5.3): Adam with {paper} ({ours}).", lang, paper=adam_text(PAPER_ADAM), ours=ours
    )
    places = translate(
        "Dropout (Section 5.4): on the output of every sub-layer, before it is added to the sub-layer's input and "
        "normalised, and on the sums of the embeddings and the positional encodings, in both stacks; "
        "P_drop = {paper} for the base model{ours}.",
        lang,
        paper=f"{PAPER_DROPOUT:g}",
        ours="" if dropout is None else translate(", {p} for this model", lang, p=f"{dropout:g}"),
    )
    return f"{optimizer} {places}"


def averaging_note(metadata: Mapping[str, Any], lang: str = "en") -> str:
    """Whether the weights are an average of saved checkpoints (Section 6.1 averages the base model's last 5,
    the big model's last 20)."""
    sources, steps = averaged_from(metadata), averaged_steps(metadata)
    paper = translate(
        "Section 6.1: the paper's base model is the average of its last 5 checkpoints (written every 10 "
        "minutes), the big model of its last 20.",
        lang,
    )
    if len(sources) > 1:
        which = ", ".join(f"{s:,}" for s in steps) if len(steps) == len(sources) else str(len(sources))
        ours = translate(
            "This model's weights are the average of {n} saved checkpoints (steps {steps}), as its config.json "
            "records (exported_from).",
            lang,
            n=len(sources),
            steps=which,
        )
    else:
        ours = translate("This checkpoint records no averaging: its weights are one save.", lang)
    return f"{ours} {paper}"


def base_model_here_text(flops_per_second: float, lang: str = "en") -> str:
    """How long Table 2's base model would train here, by Section 6.1's method turned around."""
    return translate(
        "The paper's base model on this machine: at its measured {gflops} GFLOP/s (a float32 matrix product), "
        "3.3\u00b710\u00b9\u2078 FLOPs would take about {years} years.",
        lang,
        gflops=f"{flops_per_second / 1e9:,.0f}",
        years=f"{base_model_seconds_here(flops_per_second) / (365.25 * 24 * 3600):,.0f}",
    )
