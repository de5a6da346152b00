"""`explorer train --init-from`: a new run that starts from a checkpoint's weights, shape and tokenizer (how the
shipped Multi30k model was continued from its first average), with a fresh optimizer and step 0."""

from __future__ import annotations

import json

import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.cli import main


def test_init_from_starts_at_the_checkpoint_weights_with_new_dropout(
    reverse_checkpoint, tmp_path, capsys, reversal_pairs
):
    start = load_checkpoint(reverse_checkpoint)
    out = tmp_path / "run"
    # lr-scale 0: the single step cannot move any weight, so the saved weights must be the initial ones exactly.
    code = main(
        ["train", "--data", reversal_pairs, "--init-from", str(reverse_checkpoint), "--dropout", "0.3",
         "--out", str(out), "--steps", "1", "--lr-scale", "0", "--eval-every", "0", "--save-every", "0", "--quiet"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    saved = load_checkpoint(out / "latest")
    assert saved.config.dropout == 0.3
    assert saved.config.d_model == start.config.d_model and saved.config.vocab_size == start.config.vocab_size
    for name, tensor in start.model.state_dict().items():
        assert torch.equal(saved.model.state_dict()[name], tensor), name
    assert saved.tokenizer.encode("a b c") == start.tokenizer.encode("a b c")
    assert saved.training["step"] == 1
    assert saved.metadata["initialised_from"]["path"] == str(reverse_checkpoint)
    json.dumps(saved.metadata)  # stays plain JSON


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--d-model", "64"], "--init-from takes the model's shape from the checkpoint; drop --d-model"),
        (["--resume"], "--init-from starts a new run; --resume continues one"),
    ],
)
def test_init_from_refuses_shape_flags_and_resume(reverse_checkpoint, tmp_path, capsys, flags, message):
    code = main(["train", "--init-from", str(reverse_checkpoint), "--out", str(tmp_path / "r"), *flags, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert not (tmp_path / "r").exists()


def test_init_from_a_missing_checkpoint_is_one_message(tmp_path, capsys):
    code = main(["train", "--init-from", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and "Traceback" not in err
