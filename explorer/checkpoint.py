"""Checkpoints: one directory rebuilds the whole model, and loading never runs pickled code.

Layout of a checkpoint directory:
    config.json           format tag, ModelConfig, free-form metadata (scores, data, command)
    model.safetensors     weights (float32, or float16 for shipping)
    tokenizer.model       the SentencePiece model
                          (an imported Marian model instead: source.spm, target.spm, vocab.json and, with
                          separate vocabularies, target_vocab.json; explorer.marian.tokenizer)
    training.json         optional: trainer state to resume (step, history, train config)
    optimizer.safetensors optional: Adam moments and RNG state to resume exactly

Saves are atomic: everything is written into a hidden sibling directory, flushed, then renamed into
place, so a reader (or a crash) never sees a half-written checkpoint.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch.overrides import TorchFunctionMode

from explorer.config import ModelConfig
from explorer.marian.tokenizer import VOCAB_FILE, VocabTokenizer
from explorer.model import Transformer
from explorer.tokenizer import TOKENIZER_FILE, Tokenizer

FORMAT = "attention-explorer-checkpoint"
FORMAT_VERSION = 1
CONFIG_FILE, WEIGHTS_FILE = "config.json", "model.safetensors"
TRAINING_FILE, OPTIMIZER_FILE = "training.json", "optimizer.safetensors"


MAX_CONFIG_BYTES = 1024 * 1024  # a real config.json is about 1 KB
MAX_HEADER_BYTES = 16 * 1024 * 1024  # a safetensors header is about 100 bytes per tensor
_CONFIG_KEYS = frozenset({"format", "format_version", "model", "metadata"})
_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}  # weights are floating point


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded; the message says which file and why."""


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    config: ModelConfig
    model: Transformer
    tokenizer: Tokenizer
    metadata: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] | None = None  # training.json, when present
    optimizer_tensors: dict[str, torch.Tensor] | None = None  # only when asked for


def _unique_state(model: Transformer) -> dict[str, torch.Tensor]:
    """State dict without the aliases of a tied embedding (safetensors refuses shared storage).

    Aliases are found by identity of the Parameter object (a tied embedding is one module registered twice),
    which also works on the meta device, where every tensor's data_ptr() is 0.
    """
    seen: set[int] = set()
    state = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) in seen:
            continue
        seen.add(id(tensor))
        state[name] = tensor.detach()
    return state


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def save_checkpoint(
    path: str | Path,
    model: Transformer,
    tokenizer: Tokenizer,
    *,
    metadata: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
    optimizer_tensors: dict[str, torch.Tensor] | None = None,
    dtype: torch.dtype | None = None,
    extra_files: dict[str, bytes] | None = None,
) -> Path:
    """Write a checkpoint directory atomically (replacing any previous one at `path`).

    `extra_files` (file name -> bytes) are written into the same directory before it is renamed into
    place, e.g. the train page's attention snapshots; loading ignores them.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.saving-", dir=path.parent))
    try:
        weights = {
            name: (t.to(dtype) if dtype is not None and t.is_floating_point() else t).detach().cpu().contiguous()
            for name, t in _unique_state(model).items()
        }
        _save_tensors(weights, staging / WEIGHTS_FILE)
        _write_json(
            staging / CONFIG_FILE,
            {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "model": model.config.to_dict(),
                "metadata": metadata or {},
            },
        )
        for name, data in tokenizer.files().items():
            (staging / name).write_bytes(data)
        if training is not None:
            _write_json(staging / TRAINING_FILE, training)
        if optimizer_tensors is not None:
            _save_tensors(
                {k: v.detach().cpu().contiguous() for k, v in optimizer_tensors.items()}, staging / OPTIMIZER_FILE
            )
        for name, data in (extra_files or {}).items():
            assert Path(name).name == name and not name.startswith("."), f"expected a plain file name, got {name!r}"
            (staging / name).write_bytes(data)
        for item in staging.iterdir():
            with open(item, "rb") as handle:
                os.fsync(handle.fileno())
        _replace_directory(staging, path)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        # Named by the checkpoint the user asked for, not by the hidden staging file that failed.
        raise OSError(error.errno, error.strerror or str(error), str(path)) from error
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return path


_OS_ERROR_CODE = re.compile(r"\(os error (\d+)\)")


def _save_tensors(tensors: dict[str, torch.Tensor], file: Path) -> None:
    """safetensors' save_file, whose I/O failures (a full disk, a read-only folder) become the OSError they are:
    safetensors reports them as a SafetensorError carrying the OS error's text ("... (os error 28) ...")."""
    try:
        save_file(tensors, str(file))
    except SafetensorError as error:
        found = _OS_ERROR_CODE.search(str(error))
        if found is None:
            raise OSError(errno.EIO, f"could not write the weights ({error})", str(file)) from error
        code = int(found.group(1))
        raise OSError(code, os.strerror(code), str(file)) from error


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
    """Read and validate config.json only (cheap: for listing checkpoints).

    Every problem is a CheckpointError of one sentence that names the file: a crafted or damaged config is
    refused here, before any tensor exists.
    """
    path = Path(path)
    config_path = path / CONFIG_FILE
    if not path.is_dir():
        raise CheckpointError(f"{path} is not a checkpoint directory")
    if not config_path.is_file():
        raise CheckpointError(f"{path} has no {CONFIG_FILE}; not an Attention Explorer checkpoint")
    if config_path.stat().st_size > MAX_CONFIG_BYTES:
        raise CheckpointError(
            f"{config_path} is {config_path.stat().st_size:,} bytes, too large for a checkpoint "
            f"config (at most {MAX_CONFIG_BYTES:,})"
        )
    try:
        data = json.loads(config_path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise CheckpointError(f"{config_path} is not valid UTF-8 JSON ({reason})") from None
    except ValueError as error:  # NaN or Infinity, from _refuse_constant
        raise CheckpointError(f"{config_path} is not valid: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{config_path} is not an Attention Explorer checkpoint (format tag missing)")
    if data.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{config_path} has format version {data.get('format_version')}; this version reads {FORMAT_VERSION}"
        )
    unknown = sorted(set(data) - _CONFIG_KEYS)
    if unknown:
        raise CheckpointError(
            f"{config_path} has unknown top-level keys {unknown}; is this checkpoint from a newer version?"
        )
    try:
        config = ModelConfig.from_dict(data.get("model"))  # type: ignore[arg-type]  # from_dict checks it is a dict
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"{config_path} is not a valid model config: {error}") from None
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise CheckpointError(f"{config_path}: metadata must be a JSON object, got {type(metadata).__name__}")
    decoding_settings(metadata, config_path)  # refuse bad decoding defaults now, not at the first translation
    return config, metadata


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"it contains {name}, which is not a number a config can hold")


@dataclass(frozen=True)
class DecodingSettings:
    """Beam width and length penalty α (Section 6.1) a checkpoint recommends, from metadata["decoding"]."""

    beam: int
    alpha: float


MAX_BEAM = 64


def decoding_settings(metadata: dict[str, Any], source: str | Path = CONFIG_FILE) -> DecodingSettings | None:
    """The checkpoint's own decoding defaults (`metadata["decoding"] = {"beam": int, "alpha": float}`), if any."""
    decoding = metadata.get("decoding")
    if decoding is None:
        return None
    if not isinstance(decoding, dict) or set(decoding) != {"beam", "alpha"}:
        raise CheckpointError(
            f'{source}: metadata "decoding" must be an object with exactly "beam" and "alpha", got {decoding!r}'
        )
    beam, alpha = decoding["beam"], decoding["alpha"]
    if isinstance(beam, bool) or not isinstance(beam, int) or not 1 <= beam <= MAX_BEAM:
        raise CheckpointError(f"{source}: decoding beam must be a whole number from 1 to {MAX_BEAM}, got {beam!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 5.0:
        raise CheckpointError(f"{source}: decoding alpha must be a number from 0 to 5, got {alpha!r}")
    return DecodingSettings(beam, float(alpha))


# The language a checkpoint's source side is in, by the corpus it was trained on ("data" in its metadata);
# an upload's or a synthetic task's is not known.
_SOURCE_LANGUAGES = {"multi30k": "en"}


def source_language(metadata: dict[str, Any]) -> str | None:
    """The ISO 639-1 code of the language the model reads ("en"), or None when the checkpoint does not say.

    A model continued (`--init-from`) or exported from another keeps that one's language.
    """
    data = metadata.get("data")
    if isinstance(data, str) and data in _SOURCE_LANGUAGES:
        return _SOURCE_LANGUAGES[data]
    parent = metadata.get("initialised_from")
    if isinstance(parent, dict) and isinstance(parent.get("metadata"), dict):
        return source_language(parent["metadata"])
    return None


class _NoNormalFill(TorchFunctionMode):
    """Skips `normal_` (the embeddings' initialisation): on the meta device it has nothing to fill, and torch runs it
    there through a Python reference whose first call imports torch._dynamo, 1.1 s of a checkpoint's first load on
    a 2-core machine. A mode applies to the thread that enters it only, so a model built elsewhere meanwhile is
    initialised as usual."""

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if getattr(func, "__name__", "") == "normal_":
            return args[0] if args else (kwargs or {})["tensor"]
        return func(*args, **(kwargs or {}))


def expected_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor in model.safetensors for `config`, without allocating any memory.

    The model is built on PyTorch's meta device (shapes only), so the answer cannot drift from the model.
    """
    with torch.device("meta"), _NoNormalFill():
        model = Transformer(config)
    return {name: tuple(tensor.shape) for name, tensor in _unique_state(model).items()}


def read_safetensors_header(file: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Name -> (dtype, shape) from a .safetensors header, checked against the file's size; reads no tensor.

    Format: 8-byte little-endian header length N, N bytes of JSON, then the tensor bytes.
    """
    if not file.is_file():
        raise CheckpointError(f"{file} is missing")
    size = file.stat().st_size
    with open(file, "rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise CheckpointError(f"{file} is corrupt or truncated (shorter than a safetensors header)")
        length = int.from_bytes(prefix, "little")
        if length > MAX_HEADER_BYTES or length > size - 8:
            raise CheckpointError(f"{file} is corrupt or truncated (its header claims {length:,} bytes)")
        raw = handle.read(length)
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CheckpointError(f"{file} is corrupt or truncated (its header is not valid JSON)") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{file} is corrupt or truncated (its header is not a JSON object)")
    data_size = size - 8 - length
    entries = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        stored = entry.get("dtype") if isinstance(entry, dict) else None
        if isinstance(stored, str) and stored not in _DTYPE_BYTES:
            raise CheckpointError(
                f"{file}: tensor {name!r} is stored as {stored[:16]}, but model weights must be floating point "
                f"({', '.join(_DTYPE_BYTES)})"
            )
        try:
            dtype, shape, (begin, end) = entry["dtype"], tuple(entry["shape"]), entry["data_offsets"]
            ok = (
                dtype in _DTYPE_BYTES
                and all(isinstance(n, int) and n >= 0 for n in shape)
                and isinstance(begin, int)
                and isinstance(end, int)
                and 0 <= begin <= end <= data_size
                and end - begin == math.prod(shape) * _DTYPE_BYTES[dtype]
            )
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise CheckpointError(f"{file} is corrupt or truncated (its entry for {name!r} does not fit the file)")
        entries[name] = (dtype, shape)
    return entries


def check_weights_match(path: Path, config: ModelConfig) -> None:
    """Refuse a model.safetensors whose tensor names or shapes disagree with `config`, reading only its header."""
    file = path / WEIGHTS_FILE
    found = read_safetensors_header(file)
    expected = expected_shapes(config)
    missing = sorted(set(expected) - set(found))
    unexpected = sorted(set(found) - set(expected))
    if missing or unexpected:
        raise CheckpointError(
            f"{file} does not match {CONFIG_FILE}: missing tensors {missing[:5]}, unexpected tensors {unexpected[:5]}"
        )
    for name, shape in expected.items():
        if found[name][1] != shape:
            raise CheckpointError(
                f"{file} does not match {CONFIG_FILE}: {name} has shape {found[name][1]} but the config implies {shape}"
            )


def _read_tensors(file: Path) -> dict[str, torch.Tensor]:
    if not file.is_file():
        raise CheckpointError(f"{file} is missing")
    try:
        return load_file(str(file))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{file} is corrupt or truncated ({error})") from None


def check_finite(file: Path, weights: dict[str, torch.Tensor]) -> None:
    """Refuse weights holding NaN or infinity: such a model cannot score a sentence (every beam search comes
    back empty, greedy search picks arbitrary tokens) and training from it stays NaN."""
    for name, tensor in weights.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            kind = "NaN" if bool(torch.isnan(tensor).any()) else "infinite"
            raise CheckpointError(
                f"{file}: tensor {name!r} holds {kind} values, so the model cannot translate or "
                "train (did its training diverge?); use an earlier checkpoint of the run"
            )


def load_checkpoint(
    path: str | Path, device: str | torch.device = "cpu", *, with_optimizer: bool = False
) -> Checkpoint:
    """Rebuild model (float32, eval mode) and tokenizer from a checkpoint directory."""
    path = Path(path)
    config, metadata = read_config(path)
    check_weights_match(path, config)  # from the header alone: nothing is allocated for a file that disagrees
    weights = _read_tensors(path / WEIGHTS_FILE)
    check_finite(path / WEIGHTS_FILE, weights)
    model = Transformer(config)
    expected = _unique_state(model)
    with torch.no_grad():
        for name, tensor in weights.items():
            expected[name].copy_(tensor.float())
    tokenizer = read_tokenizer(path, config)
    training = None
    if (path / TRAINING_FILE).is_file():
        try:
            training = json.loads((path / TRAINING_FILE).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CheckpointError(f"{path / TRAINING_FILE} is not valid JSON ({error})") from None
    optimizer = _read_tensors(path / OPTIMIZER_FILE) if with_optimizer and (path / OPTIMIZER_FILE).is_file() else None
    model.to(device).eval()
    return Checkpoint(path, config, model, tokenizer, metadata, training, optimizer)


def read_tokenizer(path: Path, config: ModelConfig) -> Tokenizer:
    """The checkpoint's tokenizer: tokenizer.model, or an imported model's vocabularies (vocab.json beside two
    SentencePiece models), checked against the config's vocabulary sizes."""
    if not (path / TOKENIZER_FILE).is_file() and (path / VOCAB_FILE).is_file():
        try:
            return VocabTokenizer.read(path, config)
        except (OSError, ValueError) as error:
            raise CheckpointError(f"{path}: the imported tokenizer cannot be read ({error})") from None
    tokenizer_path = path / TOKENIZER_FILE
    if not tokenizer_path.is_file():
        raise CheckpointError(f"{tokenizer_path} is missing")
    try:
        tokenizer = Tokenizer.from_bytes(tokenizer_path.read_bytes())
    except Exception as error:  # sentencepiece raises bare RuntimeError/OSError on garbage
        raise CheckpointError(f"{tokenizer_path} is not a SentencePiece model ({error})") from None
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(
            f"{tokenizer_path} has {tokenizer.vocab_size} pieces but the model expects {config.vocab_size}"
        )
    return tokenizer


def is_checkpoint(path: str | Path) -> bool:
    return (Path(path) / CONFIG_FILE).is_file() and (Path(path) / WEIGHTS_FILE).is_file()


def list_checkpoints(root: str | Path) -> list[Path]:
    """Checkpoint directories directly under `root` (hidden staging directories excluded), sorted by name."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and is_checkpoint(p))


def average_weights(paths: Sequence[str | Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of several checkpoints' weights (the paper averages the last 5 or 20, Section 6.1)."""
    if not paths:
        raise ValueError("average_weights needs at least one checkpoint")
    total: dict[str, torch.Tensor] = {}
    for path in paths:
        config, _ = read_config(path)
        check_weights_match(Path(path), config)  # names, shapes and a floating-point dtype, from the header
        weights = _read_tensors(Path(path) / WEIGHTS_FILE)
        check_finite(Path(path) / WEIGHTS_FILE, weights)
        for name, tensor in weights.items():
            total[name] = total.get(name, 0) + tensor.double()
    return {name: (tensor / len(paths)).float() for name, tensor in total.items()}


def load_weights_into(model: Transformer, weights: dict[str, torch.Tensor]) -> None:
    """Copy a (deduplicated) weight dict into `model`, e.g. the result of `average_weights`."""
    state = _unique_state(model)
    with torch.no_grad():
        for name, tensor in weights.items():
            state[name].copy_(tensor.to(state[name].dtype))
