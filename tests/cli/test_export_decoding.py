"""`explorer export --beam/--alpha`: the decoding settings chosen on validation are stored with the model
and then used by `explorer translate`/`evaluate` by default."""

from __future__ import annotations

import json

import pytest

from explorer.checkpoint import decoding_settings, load_checkpoint
from explorer.cli import main


def test_export_stores_the_decoding_pair(reverse_checkpoint, tmp_path, capsys):
    out = tmp_path / "shipped"
    assert main(["export", str(reverse_checkpoint), "--to", str(out), "--beam", "5", "--alpha", "1.2"]) == 0
    capsys.readouterr()
    stored = decoding_settings(load_checkpoint(out).metadata)
    assert stored is not None and (stored.beam, stored.alpha) == (5, 1.2)
    assert main(["info", "-c", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["decoding"]["beam"] == 5


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--beam", "4"], "--beam and --alpha are stored together"),
        (["--alpha", "1.0"], "--beam and --alpha are stored together"),
        (["--beam", "100", "--alpha", "1.0"], "decoding beam must be a whole number from 1 to 64"),
        (["--beam", "4", "--alpha", "9"], "decoding alpha must be a number from 0 to 5"),
    ],
)
def test_bad_decoding_pairs_are_refused_before_writing(reverse_checkpoint, tmp_path, capsys, flags, message):
    out = tmp_path / "shipped"
    assert main(["export", str(reverse_checkpoint), "--to", str(out), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
