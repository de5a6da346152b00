"""Device choice: CUDA when present, else CPU; always overridable."""

from __future__ import annotations

import torch


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        devices[:0] = [f"cuda:{i}" if count > 1 else "cuda" for i in range(count)]
    return devices


def resolve_device(name: str | torch.device | None = "auto") -> torch.device:
    """ "auto" (or None) picks CUDA when available; anything else is checked, with a clear error."""
    if name is None or str(name) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available on this machine; use 'cpu' or 'auto'")
    return device
