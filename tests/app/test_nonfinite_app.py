"""The app refuses a checkpoint whose weights are NaN with the loader's sentence naming the tensor, instead of
a traceback at the first beam search."""

from __future__ import annotations

import shutil

import torch
from safetensors.torch import load_file, save_file

from tests.apptest_helpers import open_page, plain

BROKEN = "decoder_layers.0.feed_forward.w_1.weight"


def test_a_nan_checkpoint_is_refused_with_the_tensor_named(reverse_checkpoint, tmp_path, monkeypatch):
    root = tmp_path / "checkpoints"
    shutil.copytree(reverse_checkpoint, root / "diverged")
    weights = load_file(str(root / "diverged" / "model.safetensors"))
    weights[BROKEN] = torch.full_like(weights[BROKEN], float("nan"))
    save_file(weights, str(root / "diverged" / "model.safetensors"))
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    at = open_page("pages/translate.py", model="diverged", beam="4", sentence="a b c")
    errors = [plain(e.value) for e in at.error]
    assert any(f"tensor '{BROKEN}' holds NaN values" in e for e in errors), errors
    assert not any(str(root) in e for e in errors), "the message names the checkpoint, not the server's folder"
