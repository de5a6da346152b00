"""benchmarks/peers.py converts the shipped checkpoint exactly: greedy outputs of CTranslate2 and of the
Hugging Face Marian model equal ours (the extra `[peers]` installs them; skipped without it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "checkpoints" / "multi30k-en-de"


def _peers():
    """benchmarks/peers.py is a script run by path; load it as a module."""
    spec = importlib.util.spec_from_file_location("peers_benchmark", REPO / "benchmarks" / "peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("system, needs", [("ctranslate2 float32", "ctranslate2"), ("hf marian", "transformers")])
def test_converted_peer_gives_our_greedy_outputs(system, needs, multi30k_root, one_torch_thread):
    if importlib.util.find_spec(needs) is None:
        pytest.skip(f"{needs} is not installed (pip install -e '.[peers]')")
    if not (SHIPPED / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    peers = _peers()
    sentences = peers._sentences(24)
    ours = peers._system("explorer", 1)(sentences, 1, 8)
    theirs = peers._system(system, 1)(sentences, 1, 8)
    assert theirs == ours
