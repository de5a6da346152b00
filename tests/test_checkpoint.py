"""Checkpoints: a directory rebuilds the model exactly; bad ones are rejected with clear errors; saves are atomic."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from explorer.checkpoint import (CheckpointError, average_weights, list_checkpoints, load_checkpoint,
                                 load_weights_into, save_checkpoint)
from explorer.inference import translate


def _copy(src, tmp_path, name="copy"):
    target = tmp_path / name
    shutil.copytree(src, target)
    return target


def test_round_trip_gives_identical_outputs(reverse_checkpoint, tmp_path):
    original = load_checkpoint(reverse_checkpoint)
    saved = save_checkpoint(tmp_path / "again", original.model, original.tokenizer, metadata={"note": "x"})
    again = load_checkpoint(saved)
    assert again.config == original.config
    src = torch.tensor([original.tokenizer.encode("a b c d") + [3]])
    tgt = torch.tensor([[2, 5, 6]])
    assert torch.equal(original.model(src, tgt).logits, again.model(src, tgt).logits)
    assert again.metadata["note"] == "x"
    assert [t.output for t in translate(again.model, again.tokenizer, ["a b c"])] == \
           [t.output for t in translate(original.model, original.tokenizer, ["a b c"])]


def test_half_precision_save_loads_back_as_float32(reverse_checkpoint, tmp_path):
    original = load_checkpoint(reverse_checkpoint)
    saved = save_checkpoint(tmp_path / "half", original.model, original.tokenizer, dtype=torch.float16)
    half = load_checkpoint(saved)
    assert all(p.dtype == torch.float32 for p in half.model.parameters())
    assert (saved / "model.safetensors").stat().st_size < (reverse_checkpoint / "model.safetensors").stat().st_size
    src = torch.tensor([original.tokenizer.encode("a b c d") + [3]])
    tgt = torch.tensor([[2, 5, 6]])
    assert torch.allclose(original.model(src, tgt).logits, half.model(src, tgt).logits, atol=5e-2)


def test_save_replaces_atomically_and_leaves_no_staging(reverse_checkpoint, tmp_path):
    checkpoint = load_checkpoint(reverse_checkpoint)
    target = tmp_path / "ckpt"
    save_checkpoint(target, checkpoint.model, checkpoint.tokenizer, metadata={"v": 1})
    save_checkpoint(target, checkpoint.model, checkpoint.tokenizer, metadata={"v": 2})
    assert load_checkpoint(target).metadata["v"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"], "staging or retired directories left behind"
    assert list_checkpoints(tmp_path) == [target]


def test_failed_save_leaves_previous_checkpoint_intact(reverse_checkpoint, tmp_path, monkeypatch):
    checkpoint = load_checkpoint(reverse_checkpoint)
    target = tmp_path / "ckpt"
    save_checkpoint(target, checkpoint.model, checkpoint.tokenizer, metadata={"v": 1})
    import explorer.checkpoint as module

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(module, "save_file", broken)
    with pytest.raises(OSError):
        save_checkpoint(target, checkpoint.model, checkpoint.tokenizer, metadata={"v": 2})
    assert load_checkpoint(target).metadata["v"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]


@pytest.mark.parametrize("damage,message", [
    ("truncate_weights", "corrupt or truncated"),
    ("garbage_weights", "corrupt or truncated"),
    ("missing_weights", "missing"),
    ("pickle_weights", "corrupt or truncated"),
    ("no_config", "not an Attention Explorer checkpoint"),
    ("foreign_config", "not an Attention Explorer checkpoint"),
    ("bad_json", "not valid UTF-8 JSON"),
    ("unknown_field", "unknown fields"),
    ("wrong_shape", "shape"),
    ("bad_tokenizer", "not a SentencePiece model"),
    ("future_version", "format version"),
])
def test_bad_checkpoints_are_rejected_clearly(reverse_checkpoint, tmp_path, damage, message):
    path = _copy(reverse_checkpoint, tmp_path)
    weights, config = path / "model.safetensors", path / "config.json"
    data = json.loads(config.read_text())
    if damage == "truncate_weights":
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    elif damage == "garbage_weights":
        weights.write_bytes(b"\x00\x01garbage" * 100)
    elif damage == "missing_weights":
        weights.unlink()
    elif damage == "pickle_weights":
        import pickle
        weights.write_bytes(pickle.dumps({"a": 1}))
    elif damage == "no_config":
        config.unlink()
    elif damage == "foreign_config":
        config.write_text(json.dumps({"architectures": ["BertModel"], "hidden_size": 768}))
    elif damage == "bad_json":
        config.write_bytes(b"\xff\xfe{not json")
    elif damage == "unknown_field":
        data["model"]["flux_capacitor"] = 1
        config.write_text(json.dumps(data))
    elif damage == "wrong_shape":
        data["model"]["d_ff"] = data["model"]["d_ff"] * 2
        config.write_text(json.dumps(data))
    elif damage == "bad_tokenizer":
        (path / "tokenizer.model").write_bytes(b"not a sentencepiece model")
    elif damage == "future_version":
        data["format_version"] = 99
        config.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


def test_not_a_directory(tmp_path):
    file = tmp_path / "model.pt"
    file.write_bytes(b"PK\x03\x04")
    with pytest.raises(CheckpointError, match="not a checkpoint directory"):
        load_checkpoint(file)


def test_averaging_weights(reverse_checkpoint, tmp_path):
    checkpoint = load_checkpoint(reverse_checkpoint)
    a = save_checkpoint(tmp_path / "a", checkpoint.model, checkpoint.tokenizer)
    with torch.no_grad():
        for p in checkpoint.model.parameters():
            p.add_(1.0)
    b = save_checkpoint(tmp_path / "b", checkpoint.model, checkpoint.tokenizer)
    mean = average_weights([a, b])
    model = load_checkpoint(a).model
    load_weights_into(model, mean)
    original = load_checkpoint(reverse_checkpoint).model
    for (name, p), q in zip(model.named_parameters(), original.parameters()):
        assert torch.allclose(p, q + 0.5, atol=1e-5), name
