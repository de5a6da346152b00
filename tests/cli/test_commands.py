"""The command line: info (Table 3 side by side), translate (args/stdin, --json), evaluate, clear errors."""

from __future__ import annotations

import io
import json
import sys

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.cli import main
from explorer.inference import translate


def run_cli(args, capsys, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_info_base_parameter_count_and_table3(capsys):
    code, out, _ = run_cli(["info", "--preset", "base", "--vocab", "37000", "--json"], capsys)
    assert code == 0
    info = json.loads(out)
    assert abs(info["parameters"] / 65e6 - 1) < 0.07
    assert {row["row"] for row in info["table3"]} >= {"base", "big", "(B) d_k=16", "(C) N=2", "(C) d_ff=4096"}
    for row in info["table3"]:
        assert abs(row["ours"] / (row["paper_millions"] * 1e6) - 1) < 0.07, row


def test_info_big_and_text_table(capsys):
    code, out, _ = run_cli(["info", "--preset", "big"], capsys)
    assert code == 0
    assert "Table 3 row" in out and "213" in out


def test_translate_arguments_stdin_and_json(reverse_checkpoint, capsys, monkeypatch):
    checkpoint = load_checkpoint(reverse_checkpoint)
    expected = [t.output for t in translate(checkpoint.model, checkpoint.tokenizer, ["a b c d", "e f g"], beam_size=4)]
    code, out, _ = run_cli(["translate", "-c", str(reverse_checkpoint), "a b c d", "e f g"], capsys)
    assert code == 0 and out.splitlines() == expected
    code, out, _ = run_cli(
        ["translate", "-c", str(reverse_checkpoint), "--json", "--n-best", "2"],
        capsys,
        stdin="a b c d\n\ne f g\n",
        monkeypatch=monkeypatch,
    )
    rows = [json.loads(line) for line in out.splitlines()]
    # The blank line keeps its place: row N answers input line N.
    assert [r["translation"] for r in rows] == [expected[0], "", expected[1]]
    assert rows[1]["source"] == "" and rows[1]["nbest"] == [] and set(rows[1]) == set(rows[0])
    rows = [rows[0], rows[2]]
    assert rows[0]["source_pieces"][-1] == "</s>" and len(rows[0]["nbest"]) == 2
    assert rows[0]["nbest"][0]["score"] >= rows[0]["nbest"][1]["score"]


def test_translate_errors_are_clear(tmp_path, capsys):
    code, _, err = run_cli(["translate", "-c", str(tmp_path / "nope"), "hello"], capsys)
    assert code == 2 and "not a checkpoint directory" in err


def test_evaluate_scores_a_hypotheses_file(tmp_path, capsys):
    (tmp_path / "ref.txt").write_text("a man rides a bike .\ntwo dogs play .\n")
    (tmp_path / "hyp.txt").write_text("a man rides a bike .\ntwo dogs play .\n")
    code, out, _ = run_cli(
        ["evaluate", "--hypotheses", str(tmp_path / "hyp.txt"), "--reference", str(tmp_path / "ref.txt")], capsys
    )
    assert code == 0 and json.loads(out)["bleu"] == pytest.approx(100.0)


def test_evaluate_translates_with_a_checkpoint(reverse_checkpoint, tmp_path, capsys):
    (tmp_path / "src.txt").write_text("a b c\nd e f g\n")
    (tmp_path / "ref.txt").write_text("c b a\ng f e d\n")
    code, out, _ = run_cli(
        [
            "evaluate",
            "-c",
            str(reverse_checkpoint),
            "--source",
            str(tmp_path / "src.txt"),
            "--reference",
            str(tmp_path / "ref.txt"),
            "--beam",
            "2",
            "--output",
            str(tmp_path / "hyp.txt"),
        ],
        capsys,
    )
    assert code == 0
    result = json.loads(out)
    assert 0 <= result["bleu"] <= 100 and result["sentences"] == 2
    assert len((tmp_path / "hyp.txt").read_text().splitlines()) == 2


def test_evaluate_rejects_misaligned_files(reverse_checkpoint, tmp_path, capsys):
    (tmp_path / "src.txt").write_text("a b c\nd e f\n")
    (tmp_path / "ref.txt").write_text("c b a\n")
    code, _, err = run_cli(
        [
            "evaluate",
            "-c",
            str(reverse_checkpoint),
            "--source",
            str(tmp_path / "src.txt"),
            "--reference",
            str(tmp_path / "ref.txt"),
        ],
        capsys,
    )
    assert code == 2 and "has 2 lines" in err


def test_train_refuses_to_overwrite_a_run(tmp_path, capsys):
    (tmp_path / "latest").mkdir()
    code, _, err = run_cli(["train", "--data", "reverse", "--out", str(tmp_path), "--steps", "1"], capsys)
    assert code == 2 and "--resume" in err
