"""Adam state <-> flat tensor dict, so a resumable checkpoint stays in safetensors (no pickle)."""

from __future__ import annotations

import torch


def optimizer_to_tensors(
    optimizer: torch.optim.Optimizer, rng_state: torch.Tensor | None = None
) -> dict[str, torch.Tensor]:
    """Flatten `optimizer.state_dict()["state"]` to {"<param index>.<name>": tensor}; hyper-parameters are
    re-set by the trainer every step, so param_groups need not be stored. `rng_state` (the run's generator)
    is kept beside them as "rng.torch", so a resumed run draws the same dropout masks."""
    flat: dict[str, torch.Tensor] = {}
    for index, state in optimizer.state_dict()["state"].items():
        for name, value in state.items():
            flat[f"{index}.{name}"] = value if torch.is_tensor(value) else torch.tensor(value)
    if rng_state is not None:
        flat["rng.torch"] = rng_state
    return flat


def optimizer_from_tensors(optimizer: torch.optim.Optimizer, flat: dict[str, torch.Tensor]) -> torch.Tensor | None:
    """Load the Adam state into `optimizer`; returns the run's saved generator state (None if absent)."""
    state_dict = optimizer.state_dict()
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in flat.items():
        if key.startswith("rng."):
            continue
        index, name = key.split(".", 1)
        state.setdefault(int(index), {})[name] = value
    expected = sum(len(group["params"]) for group in state_dict["param_groups"])
    if state and max(state) >= expected:
        raise ValueError(f"optimizer state has {max(state) + 1} parameters but the model has {expected}")
    state_dict["state"] = state
    optimizer.load_state_dict(state_dict)
    return flat.get("rng.torch")
