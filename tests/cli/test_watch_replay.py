"""`explorer train --watch` snapshots chosen sentences' cross-attention at every evaluation, and `explorer export`
ships those snapshots and the loss curve with the model, so the Heads page can replay a shipped model's
training."""

from __future__ import annotations

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.cli import main
from explorer.training.snapshots import load_snapshots

WATCHED = ["a g a", "b h b"]


def test_watched_sentences_are_snapshotted_and_exported_with_the_loss_curve(
    reverse_checkpoint, tmp_path, capsys, reversal_pairs
):
    run = tmp_path / "run"
    watch = [flag for sentence in WATCHED for flag in ("--watch", sentence)]
    code = main(
        ["train", "--data", reversal_pairs, "--init-from", str(reverse_checkpoint), "--out", str(run),
         "--steps", "4", "--eval-every", "2", "--save-every", "2", "--bleu-sentences", "4", "--log-every", "1",
         "--threads", "1", "--quiet", *watch]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    in_run = load_snapshots(run)
    assert [s.step for s in in_run] == [0, 2, 4]  # the starting model, then every evaluation
    assert [s.source for s in in_run[-1].samples] == WATCHED
    capsys.readouterr()

    shipped = tmp_path / "shipped"
    assert main(["export", str(run), "--to", str(shipped), "--average", "2", "--half"]) == 0
    assert '"snapshots": 3' in capsys.readouterr().out
    snapshots = load_snapshots(shipped)
    assert [s.step for s in snapshots] == [0, 2, 4]
    config = load_checkpoint(shipped).config
    for snapshot in snapshots:  # one map per decoder layer and head, for every watched sentence
        assert [s.source for s in snapshot.samples] == WATCHED
        assert snapshot.samples[0].cross_attention.shape[:2] == (config.n_decoder_layers, config.n_heads)
    history = load_checkpoint(shipped).training["history"]
    assert history["step"] == [1, 2, 3, 4] and len(history["loss"]) == 4
    assert not (shipped / "optimizer.safetensors").exists()  # a model to use, not a run to resume
    capsys.readouterr()
    # Naming the run's latest/ checkpoint finds the run's snapshots one folder up.
    assert main(["export", str(run / "latest"), "--to", str(tmp_path / "from-latest")]) == 0
    assert [s.step for s in load_snapshots(tmp_path / "from-latest")] == [0, 2, 4]


def test_export_of_a_run_that_watched_nothing_has_no_snapshots(reverse_checkpoint, tmp_path, capsys, reversal_pairs):
    run = tmp_path / "run"
    code = main(
        ["train", "--data", reversal_pairs, "--init-from", str(reverse_checkpoint), "--out", str(run),
         "--steps", "2", "--eval-every", "0", "--save-every", "0", "--threads", "1", "--quiet"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert main(["export", str(run), "--to", str(tmp_path / "shipped")]) == 0
    assert '"snapshots": 0' in capsys.readouterr().out
    assert load_snapshots(tmp_path / "shipped") == []


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--watch", "  "], "--watch needs a sentence, got an empty one"),
        ([f for i in range(9) for f in ("--watch", f"a{i}")], "--watch takes at most 8 sentences, got 9"),
        (["--resume", "--watch", "a g a"], "--watch is set when a run starts"),
    ],
)
def test_bad_watch_flags_are_refused_before_training(tmp_path, capsys, flags, message, reversal_pairs):
    code = main(["train", "--data", reversal_pairs, "--out", str(tmp_path / "run"), "--steps", "1", *flags])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
