"""benchmarks/probes/peers_opus.py at the tiny shape: a random Marian folder imported by explorer and converted by
CTranslate2's own converter gives the same outputs token for token, greedy and beam 4, with every output held to
the same length (the extra `[peers]` installs CTranslate2; skipped without it)."""

from __future__ import annotations

import importlib.util

import pytest

from benchmarks.probes import peers_opus


def test_the_opus_shaped_peers_run_gives_identical_outputs_at_a_tiny_shape(monkeypatch, capsys):
    for module in ("ctranslate2", "transformers"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[peers]')")
    monkeypatch.setenv("PEERS_THREADS", "1")
    assert peers_opus.main(1, peers_opus.QUICK_SENTENCES, quick=True) == 0
    out = capsys.readouterr().out
    n = peers_opus.QUICK_SENTENCES
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in out.splitlines() if line.startswith("| ")}
    assert set(rows) >= {"explorer", "ctranslate2 float32"}
    assert rows["ctranslate2 float32"].rstrip(" |").endswith(f"{n}/{n} / {n}/{n}"), rows
    assert f"held to exactly {peers_opus.OUTPUT_TOKENS} pieces" in out
    assert f"0/{n} greedy, 0/{n} beam 4" in out
