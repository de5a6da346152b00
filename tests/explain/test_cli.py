"""`explorer attribute --json`: one object per sentence, one value per source piece for every output token."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_attribute_json_shape(words_checkpoint, capsys):
    sentence = "a man rides a bicycle ."
    status = main(["attribute", "-c", str(words_checkpoint), "--sentence", sentence, "--steps", "8", "--json"])
    out = capsys.readouterr().out.splitlines()
    assert status == 0 and len(out) == 1
    result = json.loads(out[0])
    assert result["source"] == sentence and result["n_steps"] == 8
    n_source = len(result["source_pieces"])
    assert result["source_pieces"][-1] == "</s>"
    assert result["tokens"] and result["tokens"][-1]["piece"] == "</s>"
    for position, token in enumerate(result["tokens"]):
        assert token["position"] == position
        assert len(token["gradient_x_input"]) == len(token["integrated_gradients"]) == n_source
        # `delta` is what the integrated gradients sum to, but for what 8 steps miss.
        assert sum(token["integrated_gradients"]) - token["delta"] == pytest.approx(
            token["completeness_error"], abs=1e-4
        )
    kinds = {(row["kind"], row["method"]) for row in result["agreement"]}
    assert ("rollout", "integrated_gradients") in kinds and ("value_weighted", "gradient_x_input") in kinds
    assert len(result["agreement"]) == 2 * (
        2 * 2 * (2 + 1) + 1
    )  # methods × (kinds × layers × (heads + mean) + rollout)


def test_attribute_refuses_too_few_steps(words_checkpoint, capsys):
    status = main(["attribute", "-c", str(words_checkpoint), "--sentence", "a dog .", "--steps", "1"])
    assert status == 2 and "--steps must be at least 2" in capsys.readouterr().err


def test_heads_align_json(words_checkpoint, tmp_path, capsys):
    (tmp_path / "src.en").write_text("a man rides a bicycle .\nthe dog walks in the park .\n")
    (tmp_path / "ref.de").write_text("ein Mann fährt ein Fahrrad .\nder Hund läuft im der Park .\n")
    (tmp_path / "gold.align").write_text("0-0 1-1 2-2 3-3 4-4 5-5\n0-0 1-1 2-2 3?3 4-4 5-5 6-6\n")
    argv = ["heads", "align", "-c", str(words_checkpoint), "--source", str(tmp_path / "src.en")]
    argv += ["--reference", str(tmp_path / "ref.de"), "--alignments", str(tmp_path / "gold.align"), "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert [s["shift"] for s in result["shifts"]] == [0, 1]
    for shift in result["shifts"]:
        assert shift["sentences"] + shift["skipped"] == 2
        assert sorted(h["head"] for h in shift["heads"]) == ["cross.0.0", "cross.0.1", "cross.1.0", "cross.1.1"]
        aers = [h["aer"] for h in shift["heads"]]
        assert aers == sorted(aers) and all(0.0 <= a <= 1.0 for a in aers), "ranked, best first"
        assert len(shift["layers"]) == 2


def test_heads_align_without_alignments_fits_test2016_only(words_checkpoint, tmp_path, capsys):
    (tmp_path / "one.txt").write_text("a dog .\n")
    argv = ["heads", "align", "-c", str(words_checkpoint), "--source", str(tmp_path / "one.txt")]
    assert main([*argv, "--reference", str(tmp_path / "one.txt")]) == 2
    assert "give --alignments" in capsys.readouterr().err
