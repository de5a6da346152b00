"""`import_marian`: a Marian model in the Hugging Face layout (a local folder, or a hub id downloaded through
huggingface_hub) turned into an explorer checkpoint, and `export_marian`, the other direction.

Order of checks, so that nothing large is allocated for a model we would refuse: the config (and generation
config) first, refused by name (explorer.marian.convert.UnsupportedModel); then the weight file's tensor names
and shapes from its header (safetensors), or `torch.load(weights_only=True, mmap=True)` for a `.bin` (no pickled
code runs, the file is mapped, not read); only then the weights are copied into a model and saved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from explorer.checkpoint import (
    MAX_CONFIG_BYTES,
    Checkpoint,
    check_finite,
    expected_shapes,
    load_weights_into,
    read_safetensors_header,
    save_checkpoint,
)
from explorer.config import ModelConfig
from explorer.marian.convert import (
    UnsupportedModel,
    config_from_marian,
    marian_config,
    marian_names,
    weights_from_marian,
    weights_to_marian,
)
from explorer.marian.tokenizer import (
    MAX_VOCAB_BYTES,
    SOURCE_SPM,
    TARGET_SPM,
    TARGET_VOCAB_FILE,
    VOCAB_FILE,
    VocabTokenizer,
    vocabulary,
)
from explorer.model import Transformer, sinusoidal_encoding
from explorer.tokenizer import BOS_PIECE, EOS_PIECE, PAD_PIECE, UNK_PIECE, Tokenizer

SAFETENSORS, PICKLED = "model.safetensors", "pytorch_model.bin"
HUB_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer_config.json",
    "README.md",
    SOURCE_SPM,
    TARGET_SPM,
    VOCAB_FILE,
    TARGET_VOCAB_FILE,
)
CARD_FILE = "CARD.md"
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
OFFLINE = (
    "cannot download {source!r}: the Hugging Face hub cannot be reached from this machine (offline); download the "
    "model's folder (config.json, model.safetensors or pytorch_model.bin, source.spm, target.spm, vocab.json) "
    "on a machine with network access and run `explorer import FOLDER --out DIR`"
)


class ImportFailure(ValueError):
    """The model cannot be imported; the message says why in one sentence (a refused setting names it)."""


def import_marian(source: str | Path, out: str | Path, *, target_language: str | None = None) -> Path:
    """Import the Marian model at `source` (folder or hub id) into the checkpoint folder `out`; returns `out`.

    `target_language` ("kor") makes `>>kor<<` the target-language token put before sentences that have none.
    """
    folder = _local_folder(str(source))
    hf = _json(folder / "config.json", required=True)
    generation = _json(folder / "generation_config.json", required=False)
    weights_file = _weights_file(folder)
    names = set(read_safetensors_header(weights_file)) if weights_file.name == SAFETENSORS else {"final_logits_bias"}
    try:
        config, decoding = config_from_marian(hf, generation, names)
    except UnsupportedModel as error:
        raise ImportFailure(f"{folder} is not supported: {error}") from None
    if target_language is not None:
        config = config.replace(target_prefix=f">>{target_language.strip('<>')}<<")
    if weights_file.name == SAFETENSORS:
        header = read_safetensors_header(weights_file)
        _check_shapes(weights_file.name, {name: shape for name, (_, shape) in header.items()}, config)
    tensors = _read_tensors(weights_file)
    if weights_file.name == PICKLED:
        config = config.replace(output_bias="final_logits_bias" in tensors)
        _check_shapes(weights_file.name, {n: tuple(t.shape) for n, t in tensors.items()}, config)
    _check_positions(tensors, config)
    if config.output_bias and not bool(tensors["final_logits_bias"].any()):
        config = config.replace(output_bias=False)  # a bias of zeros is no bias: the logits are the same numbers
    weights = weights_from_marian(tensors, config)
    check_finite(weights_file, weights)
    tokenizer = _tokenizer(folder, config)
    model = Transformer(config)
    load_weights_into(model, weights)
    model.eval()
    metadata = _card_metadata(str(source), folder, config, decoding)
    card = _card(metadata, config)
    return save_checkpoint(out, model, tokenizer, metadata=metadata, extra_files={CARD_FILE: card.encode("utf-8")})


def export_marian(checkpoint: Checkpoint, out: str | Path) -> Path:
    """Write `checkpoint` as a Marian model folder that transformers' MarianMTModel and MarianTokenizer load."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    config = checkpoint.config
    decoding = checkpoint.metadata.get("decoding")
    (out / "config.json").write_text(json.dumps(marian_config(config, decoding), indent=2) + "\n", encoding="utf-8")
    state = {name: t for name, t in checkpoint.model.state_dict().items() if name != "sinusoids"}
    save_file(weights_to_marian(state, config), str(out / SAFETENSORS), metadata={"format": "pt"})
    tokenizer = checkpoint.tokenizer
    if isinstance(tokenizer, VocabTokenizer):
        files = tokenizer.files()
    else:  # our one SentencePiece model: its ids are the model's, on both sides
        proto = tokenizer.to_bytes()
        pieces = [tokenizer.id_to_piece(i) for i in range(tokenizer.vocab_size)]
        files = VocabTokenizer(proto, proto, pieces).files()
    for name, data in files.items():
        (out / name).write_bytes(data)
    tokenizer_config = {"separate_vocabs": TARGET_VOCAB_FILE in files, "model_max_length": config.max_len}
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config) + "\n", encoding="utf-8")
    return out


# ------------------------------------------------------------------------------------------------- reading
def _local_folder(source: str) -> Path:
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.exists() or not _HUB_ID.fullmatch(source):
        raise ImportFailure(f"{source} is neither a model folder nor a hub id such as Helsinki-NLP/opus-mt-en-de")
    try:
        from huggingface_hub import list_repo_files, snapshot_download
    except ImportError:
        raise ImportFailure(OFFLINE.format(source=source) + " (huggingface_hub is not installed)") from None
    try:
        present = set(list_repo_files(source))
        weights = [SAFETENSORS] if SAFETENSORS in present else [PICKLED]
        return Path(snapshot_download(source, allow_patterns=[*HUB_FILES, *weights]))
    except Exception as error:  # connection, offline mode, a missing repository: one sentence, not a traceback
        reason = " ".join(str(error).split())[:200]
        if "not found" in reason.lower() or "404" in reason:
            raise ImportFailure(f"the hub has no model {source!r} ({reason})") from None
        raise ImportFailure(OFFLINE.format(source=source)) from None


def _json(file: Path, *, required: bool, limit: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """The JSON object in `file`, refused above `limit` bytes (a config's, unless a vocabulary's is given)."""
    if not file.is_file():
        if required:
            raise ImportFailure(f"{file.parent} has no {file.name}: not a model in the Hugging Face layout")
        return {}
    if file.stat().st_size > limit:
        what = "vocabulary" if limit == MAX_VOCAB_BYTES else "model config"
        raise ImportFailure(f"{file} is larger than {limit:,} bytes: not a {what}")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ImportFailure(f"{file} is not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ImportFailure(f"{file} is not a JSON object")
    return data


def _weights_file(folder: Path) -> Path:
    for name in (SAFETENSORS, PICKLED):
        if (folder / name).is_file():
            return folder / name
    others = sorted(p.name for p in folder.iterdir() if p.suffix in (".h5", ".msgpack", ".bin", ".pt", ".ckpt"))
    found = f" (found {', '.join(others)}, which this program does not read)" if others else ""
    raise ImportFailure(f"{folder} has neither {SAFETENSORS} nor {PICKLED}{found}")


def _read_tensors(file: Path) -> dict[str, torch.Tensor]:
    if file.name == SAFETENSORS:
        with safe_open(str(file), framework="pt") as handle:
            return {name: handle.get_tensor(name) for name in handle.keys()}  # noqa: SIM118 (not a dict)
    try:
        try:
            loaded = torch.load(file, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as error:  # a file in torch's legacy (pre-zip) format cannot be mapped: read it
            if "mmap" not in str(error):
                raise
            loaded = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as error:  # weights_only refuses any pickled object that is not plain tensors
        raise ImportFailure(f"{file} cannot be read as plain tensors, so it is not loaded ({error})") from None
    if not isinstance(loaded, dict) or not all(isinstance(t, torch.Tensor) for t in loaded.values()):
        raise ImportFailure(f"{file} does not hold a dictionary of tensors")
    return loaded


def _check_shapes(file: str, found: Mapping[str, tuple[int, ...]], config: ModelConfig) -> None:
    """Refuse weights whose names or shapes do not fit `config`, before they are read."""
    expected = expected_shapes(config)
    for ours, theirs in marian_names(config).items():
        if theirs not in found:
            raise ImportFailure(f"{file} has no tensor {theirs}")
        shape = tuple(found[theirs])
        wanted = expected[ours]
        if ours == "logits_bias":
            shape = (shape[-1],) if shape else shape
        if shape != wanted:
            raise ImportFailure(f"{file}: {theirs} has shape {shape}, but config.json implies {wanted}")


def _check_positions(tensors: Mapping[str, torch.Tensor], config: ModelConfig) -> None:
    """Refuse a model whose stored position table is not the sinusoid table (learned positions)."""
    table = sinusoidal_encoding(config.max_len, config.d_model, layout="split")
    for side in ("encoder", "decoder"):
        stored = tensors.get(f"model.{side}.embed_positions.weight")
        if stored is not None and (stored.shape != table.shape or not torch.allclose(stored.float(), table, atol=1e-4)):
            raise ImportFailure(f"the {side}'s positions are learned, not the sinusoid table: not supported")


def _tokenizer(folder: Path, config: ModelConfig) -> Tokenizer:
    """Our plain Tokenizer where the model's vocabulary is its SentencePiece model's own ids (one we exported),
    else the two SentencePiece models over vocab.json."""
    for name in (SOURCE_SPM, TARGET_SPM, VOCAB_FILE):
        if not (folder / name).is_file():
            raise ImportFailure(f"{folder} has no {name}: the tokenizer of a Marian model is needed")
    # opus-mt's vocab.json is about 1.5 MB (58,101 pieces): read with the vocabulary's limit, not a config's.
    vocab_json = _json(folder / VOCAB_FILE, required=True, limit=MAX_VOCAB_BYTES)
    separate = (folder / TARGET_VOCAB_FILE).is_file() and bool(
        _json(folder / "tokenizer_config.json", required=False).get("separate_vocabs", True)
    )
    try:
        source = vocabulary(vocab_json, VOCAB_FILE)
        target = (
            vocabulary(_json(folder / TARGET_VOCAB_FILE, required=True, limit=MAX_VOCAB_BYTES), TARGET_VOCAB_FILE)
            if separate
            else None
        )
        proto, target_proto = (folder / SOURCE_SPM).read_bytes(), (folder / TARGET_SPM).read_bytes()
        if target is None and proto == target_proto and _own_ids(proto, source):
            return Tokenizer(proto)
        tokenizer = VocabTokenizer(proto, target_proto, source, target, config.target_prefix)
    except (ValueError, RuntimeError) as error:
        raise ImportFailure(f"{folder}: the tokenizer cannot be read ({error})") from None
    if len(source) != config.vocab_size or len(target or source) != config.output_vocab_size:
        raise ImportFailure(
            f"{folder}: the vocabularies have {len(source)} and {len(target or source)} pieces but config.json says "
            f"{config.vocab_size} and {config.output_vocab_size}"
        )
    return tokenizer


def _own_ids(proto: bytes, pieces: list[str]) -> bool:
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_proto=proto)
    specials = [processor.id_to_piece(i) for i in range(min(4, processor.get_piece_size()))]
    return specials == [PAD_PIECE, UNK_PIECE, BOS_PIECE, EOS_PIECE] and pieces == [
        processor.id_to_piece(i) for i in range(processor.get_piece_size())
    ]


# ---------------------------------------------------------------------------------------------------- card
def _card_metadata(source: str, folder: Path, config: ModelConfig, decoding: dict[str, Any]) -> dict[str, Any]:
    readme = folder / "README.md"
    text = readme.read_text(encoding="utf-8", errors="replace")[:100_000] if readme.is_file() else ""
    licence = re.search(r"^license:\s*(\S+)", text, re.MULTILINE)
    return {
        "imported_from": source,
        "licence": licence.group(1) if licence else "not stated (see the model's page)",
        "architecture": (
            f"Marian encoder-decoder, {config.n_encoder_layers}+{config.n_decoder_layers} layers, d_model "
            f"{config.d_model}, {config.n_heads} heads, d_ff {config.d_ff}, {config.activation}"
        ),
        "decoding": decoding,
    }


def _card(metadata: Mapping[str, Any], config: ModelConfig) -> str:
    vocab = (
        f"{config.vocab_size:,} pieces, shared"
        if config.target_vocab_size is None
        else f"{config.vocab_size:,} source and {config.output_vocab_size:,} target pieces"
    )
    rows = [
        f"# {Path(str(metadata['imported_from'])).name}",
        "",
        f"- Source: {metadata['imported_from']}",
        f"- Licence: {metadata['licence']}",
        f"- Architecture: {metadata['architecture']}",
        f"- Vocabulary: {vocab}",
        f"- Decoding: beam {metadata['decoding']['beam']}, length normalisation score / length^"
        f"{metadata['decoding']['alpha']}, <pad> never generated: {config.ban_pad}, at most "
        f"{config.max_output_len or 'input length + 50'} output tokens",
        f"- Target-language token: {config.target_prefix or 'none'}",
        "",
        "Imported with `explorer import`; the weights are the model's own, unchanged.",
    ]
    return "\n".join(rows) + "\n"
