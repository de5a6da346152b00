"""benchmarks/probes/peers.py converts the shipped checkpoint exactly: greedy outputs of CTranslate2 and of the
Hugging Face Marian model equal ours (the extra `[peers]` installs them; skipped without it)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from benchmarks.probes import peer_steps, peers, versions

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "checkpoints" / "multi30k-en-de"


@pytest.mark.slow
@pytest.mark.parametrize("system, needs", [("ctranslate2 float32", "ctranslate2"), ("hf marian", "transformers")])
def test_converted_peer_gives_our_greedy_outputs(system, needs, multi30k_root, one_torch_thread):
    if importlib.util.find_spec(needs) is None:
        pytest.skip(f"{needs} is not installed (pip install -e '.[peers]')")
    if not (SHIPPED / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    sentences = peers._sentences(24)
    ours = peers._system("explorer", 1)(sentences, 1, 8)
    theirs = peers._system(system, 1)(sentences, 1, 8)
    assert theirs == ours


def test_ctranslate2_runs_on_each_of_its_cpu_backends_at_each_thread_count():
    """CTranslate2's MKL backend at 2 threads was 6.7x slower than its oneDNN backend on an Intel Xeon (62 vs
    9.3 ms a sentence): the benchmark must measure both and report its best, not the default."""
    ct2 = peers.settings_of("ctranslate2 float32", (1, 2))
    assert [(label, threads) for label, threads, _ in ct2] == [
        ("1t mkl", 1),
        ("1t dnnl", 1),
        ("2t mkl", 2),
        ("2t dnnl", 2),
    ]
    assert {env["CT2_USE_MKL"] for _, _, env in ct2} == {"0", "1"}
    assert [(label, env) for label, _, env in peers.settings_of("explorer", (1, 2))] == [("1t", {}), ("2t", {})]
    runs = {"1t mkl": [{"figures": {"x (ms)": 13.0}}] * 3, "2t dnnl": [{"figures": {"x (ms)": 9.3}}] * 3}
    assert peers._best(runs, "x (ms)") == (9.3, "2t dnnl")


def test_peers_systems_picks_a_head_to_head_and_always_keeps_the_reference(monkeypatch, capsys):
    assert peers.chosen_systems(None) == peers.SYSTEMS
    assert peers.chosen_systems("explorer") == ("explorer", "ctranslate2 float32")
    assert peers.chosen_systems(" hf marian ,explorer,") == ("explorer", "ctranslate2 float32", "hf marian")
    monkeypatch.setenv("PEERS_SYSTEMS", "explorer,ctranslate3")
    monkeypatch.setattr(peers, "prepare", lambda *args: pytest.fail("a misspelt system must stop before converting"))
    assert peers.main(1, 10) == 2
    assert "ctranslate3" in capsys.readouterr().err


@pytest.mark.parametrize("label, needs", [("explorer", "torch"), ("ctranslate2 float32 (oneDNN)", "ctranslate2")])
def test_peer_steps_splits_a_greedy_sentence_into_encoder_and_steps(
    label, needs, tmp_path, one_torch_thread, monkeypatch
):
    """benchmarks/probes/peer_steps.py, the child of one system on three sentences: the output capped at one piece
    takes less than a whole sentence, a further step is positive, and the step count is a whole translation's."""
    if importlib.util.find_spec(needs) is None:
        pytest.skip(f"{needs} is not installed (pip install -e '.[peers]')")
    if not (SHIPPED / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    import explorer.runtime

    monkeypatch.setattr(explorer.runtime, "configure_allocator", lambda: None)  # a process-wide setting: not here
    sentences = ["A man is riding a bike.", "Two dogs play in the snow.", "A girl in a red dress sings on a stage."]
    if label == "explorer":
        from explorer.checkpoint import load_checkpoint

        c = load_checkpoint(SHIPPED, "cpu")
        meta = {"max_len": c.config.max_len, "eos": c.tokenizer.id_to_piece(c.config.eos_id), "sentences": sentences}
        (tmp_path / "work.json").write_text(json.dumps(meta))
    else:
        folder = peers.prepare(tmp_path, 0)
        meta = json.loads((folder / "work.json").read_text())
        (folder / "work.json").write_text(json.dumps({**meta, "sentences": sentences}))
    out = tmp_path / "out.json"
    peer_steps.child(label, str(tmp_path), str(out))
    figures = json.loads(out.read_text())
    assert 0 < figures["encoder + first step (ms)"] < figures["sentence (ms)"]
    # A further step is a difference of two timings: under load it can come out at or below 0 ms (-0.70 ms was
    # seen with another job beside the suite), so the split is checked to be a number, not its sign.
    assert all(math.isfinite(figures[k]) for k in ("a further step (ms)", "a further step, whole sentences (ms)"))
    assert 4 <= figures["steps"] <= 20


@pytest.mark.slow
def test_versions_times_an_old_commit_against_this_checkout(multi30k_root, capsys):
    """benchmarks/probes/versions.py against HEAD itself: both children decode, from their own worktrees, and agree."""
    if not (SHIPPED / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: versions.py checks the old commit out with git worktree")
    assert versions.main("HEAD", 1, 6) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "|---" not in line]
    cells = [row.split(" | ")[0].removeprefix("| ") for row in rows[1:]]
    assert cells == [cell for cell, _, _ in versions.CELLS]
    assert all(row.rstrip(" |").endswith("6/6") for row in rows[1:]), rows
