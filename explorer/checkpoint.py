"""Checkpoints: one directory rebuilds the whole model, and loading never runs pickled code.

Layout of a checkpoint directory:
    config.json           format tag, ModelConfig, free-form metadata (scores, data, command)
    model.safetensors     weights (float32, or float16 for shipping)
    tokenizer.model       the SentencePiece model
    training.json         optional: trainer state to resume (step, history, train config)
    optimizer.safetensors optional: Adam moments and RNG state to resume exactly

Saves are atomic: everything is written into a hidden sibling directory, flushed, then renamed into
place, so a reader (or a crash) never sees a half-written checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from explorer.config import ModelConfig
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer

FORMAT = "attention-explorer-checkpoint"
FORMAT_VERSION = 1
CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE = "config.json", "model.safetensors", "tokenizer.model"
TRAINING_FILE, OPTIMIZER_FILE = "training.json", "optimizer.safetensors"


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded; the message says which file and why."""


@dataclass
class Checkpoint:
    path: Path
    config: ModelConfig
    model: Transformer
    tokenizer: Tokenizer
    metadata: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] | None = None  # training.json, when present
    optimizer_tensors: dict[str, torch.Tensor] | None = None  # only when asked for


def _unique_state(model: Transformer) -> dict[str, torch.Tensor]:
    """State dict without the aliases of a tied embedding (safetensors refuses shared storage)."""
    seen: set[int] = set()
    state = {}
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() in seen:
            continue
        seen.add(tensor.data_ptr())
        state[name] = tensor
    return state


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def save_checkpoint(path: str | Path, model: Transformer, tokenizer: Tokenizer, *,
                    metadata: dict[str, Any] | None = None, training: dict[str, Any] | None = None,
                    optimizer_tensors: dict[str, torch.Tensor] | None = None,
                    dtype: torch.dtype | None = None, extra_files: dict[str, bytes] | None = None) -> Path:
    """Write a checkpoint directory atomically (replacing any previous one at `path`).

    `extra_files` (file name -> bytes) are written into the same directory before it is renamed into
    place, e.g. the train page's attention snapshots; loading ignores them.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.saving-", dir=path.parent))
    try:
        weights = {name: (t.to(dtype) if dtype is not None and t.is_floating_point() else t).detach().cpu().contiguous()
                   for name, t in _unique_state(model).items()}
        save_file(weights, str(staging / WEIGHTS_FILE))
        _write_json(staging / CONFIG_FILE, {"format": FORMAT, "format_version": FORMAT_VERSION,
                                            "model": model.config.to_dict(), "metadata": metadata or {}})
        (staging / TOKENIZER_FILE).write_bytes(tokenizer.to_bytes())
        if training is not None:
            _write_json(staging / TRAINING_FILE, training)
        if optimizer_tensors is not None:
            save_file({k: v.detach().cpu().contiguous() for k, v in optimizer_tensors.items()},
                      str(staging / OPTIMIZER_FILE))
        for name, data in (extra_files or {}).items():
            assert Path(name).name == name and not name.startswith("."), f"expected a plain file name, got {name!r}"
            (staging / name).write_bytes(data)
        for item in staging.iterdir():
            with open(item, "rb") as handle:
                os.fsync(handle.fileno())
        _replace_directory(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return path


def _replace_directory(staging: Path, target: Path) -> None:
    """Rename `staging` to `target`; an existing target is moved aside first and deleted after."""
    if target.exists():
        retired = target.parent / f".{target.name}.old-{os.getpid()}-{id(staging)}"
        os.replace(target, retired)
        os.replace(staging, target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, target)


def read_config(path: str | Path) -> tuple[ModelConfig, dict[str, Any]]:
    """Read and validate config.json only (cheap: for listing checkpoints)."""
    path = Path(path)
    config_path = path / CONFIG_FILE
    if not path.is_dir():
        raise CheckpointError(f"{path} is not a checkpoint directory")
    if not config_path.is_file():
        raise CheckpointError(f"{path} has no {CONFIG_FILE}; not an Attention Explorer checkpoint")
    try:
        data = json.loads(config_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{config_path} is not valid UTF-8 JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{config_path} is not an Attention Explorer checkpoint (format tag missing)")
    if data.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{config_path} has format version {data.get('format_version')}; "
                              f"this version reads {FORMAT_VERSION}")
    try:
        config = ModelConfig.from_dict(data.get("model"))
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"{config_path}: invalid model config: {error}") from None
    return config, data.get("metadata") or {}


def _read_tensors(file: Path) -> dict[str, torch.Tensor]:
    if not file.is_file():
        raise CheckpointError(f"{file} is missing")
    try:
        return load_file(str(file))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{file} is corrupt or truncated ({error})") from None


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu", *,
                    with_optimizer: bool = False) -> Checkpoint:
    """Rebuild model (float32, eval mode) and tokenizer from a checkpoint directory."""
    path = Path(path)
    config, metadata = read_config(path)
    weights = _read_tensors(path / WEIGHTS_FILE)
    model = Transformer(config)
    expected = _unique_state(model)
    missing = sorted(set(expected) - set(weights))
    unexpected = sorted(set(weights) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{path / WEIGHTS_FILE} does not match its config: missing {missing[:5]}, "
                              f"unexpected {unexpected[:5]}")
    for name, tensor in weights.items():
        if tensor.shape != expected[name].shape:
            raise CheckpointError(f"{path / WEIGHTS_FILE}: {name} has shape {tuple(tensor.shape)}, "
                                  f"config needs {tuple(expected[name].shape)}")
    with torch.no_grad():
        for name, tensor in weights.items():
            expected[name].copy_(tensor.float())
    tokenizer_path = path / TOKENIZER_FILE
    if not tokenizer_path.is_file():
        raise CheckpointError(f"{tokenizer_path} is missing")
    try:
        tokenizer = Tokenizer.from_bytes(tokenizer_path.read_bytes())
    except Exception as error:  # sentencepiece raises bare RuntimeError/OSError on garbage
        raise CheckpointError(f"{tokenizer_path} is not a SentencePiece model ({error})") from None
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(f"{tokenizer_path} has {tokenizer.vocab_size} pieces but the model expects "
                              f"{config.vocab_size}")
    training = None
    if (path / TRAINING_FILE).is_file():
        try:
            training = json.loads((path / TRAINING_FILE).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CheckpointError(f"{path / TRAINING_FILE} is not valid JSON ({error})") from None
    optimizer = _read_tensors(path / OPTIMIZER_FILE) if with_optimizer and (path / OPTIMIZER_FILE).is_file() else None
    model.to(device).eval()
    return Checkpoint(path, config, model, tokenizer, metadata, training, optimizer)


def is_checkpoint(path: str | Path) -> bool:
    return (Path(path) / CONFIG_FILE).is_file() and (Path(path) / WEIGHTS_FILE).is_file()


def list_checkpoints(root: str | Path) -> list[Path]:
    """Checkpoint directories directly under `root` (hidden staging directories excluded), sorted by name."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and is_checkpoint(p))


def average_weights(paths: list[str | Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of several checkpoints' weights (the paper averages the last 5 or 20, Section 6.1)."""
    if not paths:
        raise ValueError("average_weights needs at least one checkpoint")
    total: dict[str, torch.Tensor] = {}
    for path in paths:
        read_config(path)
        for name, tensor in _read_tensors(Path(path) / WEIGHTS_FILE).items():
            total[name] = total.get(name, 0) + tensor.double()
    return {name: (tensor / len(paths)).float() for name, tensor in total.items()}


def load_weights_into(model: Transformer, weights: dict[str, torch.Tensor]) -> None:
    """Copy a (deduplicated) weight dict into `model`, e.g. the result of `average_weights`."""
    state = _unique_state(model)
    with torch.no_grad():
        for name, tensor in weights.items():
            state[name].copy_(tensor.to(state[name].dtype))
