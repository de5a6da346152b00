"""Switching attention heads off: a mask passed into the model as an argument.

Michel et al. (2019), "Are Sixteen Heads Really Better than One?", ablate a head by multiplying its output
by a gate ξ_h ∈ {0, 1} before the concatenation that W^O projects: MultiHead = Concat(ξ_1 head_1, …) W^O.
`HeadMask` holds those gates for the three attention families, one (layers, heads) tensor each, 1 = keep,
0 = off. Mean-ablation replaces a switched-off head by its mean output over a reference set instead of zero
(`HeadMeans`), which keeps the input of W^O on its usual scale.

The mask is a value handed to `Transformer.forward` / `encode` / `decode_step`, never stored on a module:
one cached model serves every browser session, each with its own mask.

Heads are named `FAMILY.LAYER.HEAD`, 0-based, FAMILY one of `enc`, `dec`, `cross` (`explorer.paper.HEAD_CODES`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from explorer.config import ModelConfig
from explorer.paper import HEAD_FAMILIES

MASK_MODES = ("zero", "mean")


class HeadNameError(ValueError):
    """A head name that does not exist in the model; the message lists the valid range."""


def family_layers(config: ModelConfig, family: str) -> int:
    return config.n_encoder_layers if family == "enc" else config.n_decoder_layers


def valid_range(config: ModelConfig) -> str:
    """One line naming every valid head, e.g. 'enc.0-2.0-3, dec.0-2.0-3, cross.0-2.0-3'."""
    top = config.n_heads - 1
    return ", ".join(f"{f}.0-{family_layers(config, f) - 1}.0-{top}" for f in HEAD_FAMILIES)


def head_name(family: str, layer: int, head: int) -> str:
    return f"{family}.{layer}.{head}"


def all_head_names(config: ModelConfig, families: Iterable[str] = HEAD_FAMILIES) -> list[str]:
    return [
        head_name(f, layer, head)
        for f in families
        for layer in range(family_layers(config, f))
        for head in range(config.n_heads)
    ]


def parse_head_name(name: str, config: ModelConfig) -> tuple[str, int, int]:
    """'cross.2.0' -> ('cross', 2, 0), checked against the model; HeadNameError otherwise."""
    parts = name.strip().split(".")
    hint = f"heads are FAMILY.LAYER.HEAD, 0-based; valid: {valid_range(config)}"
    if len(parts) != 3 or parts[0] not in HEAD_FAMILIES or not (parts[1].isdigit() and parts[2].isdigit()):
        raise HeadNameError(f"unknown head {name.strip()!r}: {hint}")
    family, layer, head = parts[0], int(parts[1]), int(parts[2])
    if layer >= family_layers(config, family) or head >= config.n_heads:
        raise HeadNameError(f"no head {name.strip()!r} in this model: {hint}")
    return family, layer, head


@dataclass(frozen=True)
class HeadSelection:
    """What one attention module needs: which heads stay and what a removed head outputs instead.

    keep: (heads,) float, 1 = keep, 0 = off; fill: (heads, d_v) or None (None = zero, Michel et al.).
    """

    keep: torch.Tensor
    fill: torch.Tensor | None = None

    def apply(self, heads: torch.Tensor) -> torch.Tensor:
        """heads (batch, heads, query, d_v), the per-head outputs before concatenation -> same shape."""
        keep = self.keep.to(device=heads.device, dtype=heads.dtype).view(1, -1, 1, 1)
        assert keep.shape[1] == heads.shape[1], f"mask has {keep.shape[1]} heads, the module {heads.shape[1]}"
        gated = heads * keep
        if self.fill is not None:
            fill = self.fill.to(device=heads.device, dtype=heads.dtype)  # (heads, d_v)
            gated = gated + (1 - keep) * fill.view(1, fill.shape[0], 1, fill.shape[1])
        return gated


@dataclass(frozen=True)
class HeadMeans:
    """Mean output of every head over a reference set, per family: (layers, heads, d_v)."""

    enc: torch.Tensor
    dec: torch.Tensor
    cross: torch.Tensor


@dataclass(frozen=True)
class HeadMask:
    """Gates per family, each (layers, heads) with 1 = keep and 0 = off, or None when no head is off.

    `means` switches from zero-ablation to mean-ablation. `HeadMask()` is the empty mask: the model
    gives bitwise the same outputs as without one.
    """

    enc: torch.Tensor | None = None
    dec: torch.Tensor | None = None
    cross: torch.Tensor | None = None
    means: HeadMeans | None = None
    # Each decoding step asks for every layer's selection: work it out once per mask, not once per step.
    _selections: dict[tuple[str, int], HeadSelection | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for family in HEAD_FAMILIES:
            gates = getattr(self, family)
            if gates is not None:
                assert gates.dim() == 2, f"{family} mask must be (layers, heads), got shape {tuple(gates.shape)}"

    # ---- construction -----------------------------------------------------------------------------------
    @classmethod
    def from_names(cls, names: Iterable[str], config: ModelConfig, means: HeadMeans | None = None) -> HeadMask:
        """Switch off the named heads ('cross.2.0', …); HeadNameError names the valid range."""
        gates: dict[str, torch.Tensor] = {}
        for name in names:
            family, layer, head = parse_head_name(name, config)
            if family not in gates:
                gates[family] = torch.ones(family_layers(config, family), config.n_heads)
            gates[family][layer, head] = 0.0
        return cls(**gates, means=means)

    @classmethod
    def parse(cls, text: str, config: ModelConfig, means: HeadMeans | None = None) -> HeadMask:
        """A comma-separated list of names; '' or 'none' is the empty mask."""
        text = text.strip()
        if text.lower() in ("", "none"):
            return cls(means=means)
        return cls.from_names([n for n in text.split(",") if n.strip()], config, means)

    def check(self, config: ModelConfig) -> HeadMask:
        """Fail loudly when the mask was made for another shape of model; returns self."""
        for family in HEAD_FAMILIES:
            gates = getattr(self, family)
            expected = (family_layers(config, family), config.n_heads)
            if gates is not None and tuple(gates.shape) != expected:
                raise HeadNameError(
                    f"{family} mask has shape {tuple(gates.shape)}, this model needs {expected}; "
                    f"valid heads: {valid_range(config)}"
                )
        return self

    # ---- reading ----------------------------------------------------------------------------------------
    def off(self) -> list[str]:
        """Names of the switched-off heads, family by family, layer-major."""
        names = []
        for family in HEAD_FAMILIES:
            gates = getattr(self, family)
            if gates is not None:
                names += [head_name(family, int(layer), int(head)) for layer, head in (gates == 0).nonzero().tolist()]
        return names

    @property
    def is_empty(self) -> bool:
        return not self.off()

    def with_means(self, means: HeadMeans | None) -> HeadMask:
        return HeadMask(self.enc, self.dec, self.cross, means)

    def layer(self, family: str, layer: int) -> HeadSelection | None:
        """The selection for one module, or None when every head of that layer is kept (the fast path)."""
        gates = getattr(self, family)
        if gates is None:
            return None
        # Gates that require grad always go in, built afresh for each graph: Michel et al.'s importance is
        # the gradient at ξ = 1.
        if gates.requires_grad:
            return HeadSelection(gates[layer], getattr(self.means, family)[layer] if self.means is not None else None)
        cache = self._selections
        if (family, layer) not in cache:
            kept = bool((gates[layer] == 1).all())
            fill = getattr(self.means, family)[layer] if self.means is not None else None
            cache[(family, layer)] = None if kept else HeadSelection(gates[layer], fill)
        return cache[(family, layer)]


def layer_selection(mask: HeadMask | None, family: str, layer: int) -> HeadSelection | None:
    return None if mask is None else mask.layer(family, layer)


class DecoderHeads(NamedTuple):
    """The kept heads of one decoder layer's two attention modules (None = all)."""

    self_attention: HeadSelection | None = None
    cross_attention: HeadSelection | None = None


ALL_DECODER_HEADS = DecoderHeads()


def decoder_heads(mask: HeadMask | None, layer: int) -> DecoderHeads:
    return DecoderHeads(layer_selection(mask, "dec", layer), layer_selection(mask, "cross", layer))
