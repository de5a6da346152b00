"""`explorer heads`, `explorer ablate`, `explorer importance`: `--heads none` is `explorer translate`, a head
switched off changes the output, and every wrong head name ends with the valid range and status 2."""

from __future__ import annotations

import io
import json
import shutil

import pytest

import explorer.cli as cli
from explorer.cli import heads

SENTENCES = "a b c d\nt s r q p\n\nd e f\n"


@pytest.fixture()
def stdin(monkeypatch):
    def feed(text: str) -> None:
        monkeypatch.setattr("sys.stdin", io.StringIO(text))

    return feed


@pytest.fixture(scope="module")
def reverse_with_data(reverse_checkpoint, tmp_path_factory):
    """The reverse fixture with its training data named, so validation sentences can be found."""
    checkpoint = tmp_path_factory.mktemp("ck") / "reverse"
    shutil.copytree(reverse_checkpoint, checkpoint)
    config = json.loads((checkpoint / "config.json").read_text())
    config["metadata"]["data"] = "reverse"
    (checkpoint / "config.json").write_text(json.dumps(config))
    return checkpoint


def run(argv, capsys) -> tuple[int, str, str]:
    # Through the real registry once the heads commands are registered there, else through this module.
    status = cli.main(argv) if heads.COMMANDS[1] in cli.COMMANDS else heads.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_heads_none_is_exactly_translate(reverse_checkpoint, stdin, capsys, one_torch_thread):
    stdin(SENTENCES)
    assert cli.main(["translate", "-c", str(reverse_checkpoint), "--beam", "2"]) == 0
    translated = capsys.readouterr().out
    stdin(SENTENCES)
    status, ablated, _ = run(["ablate", "-c", str(reverse_checkpoint), "--heads", "none", "--beam", "2"], capsys)
    assert status == 0
    assert ablated == translated and len(ablated.splitlines()) == 4


def test_switching_heads_off_changes_the_translation(reverse_checkpoint, stdin, capsys, one_torch_thread):
    stdin(SENTENCES)
    _, plain, _ = run(["ablate", "-c", str(reverse_checkpoint), "--heads", "none"], capsys)
    stdin(SENTENCES)
    status, ablated, err = run(["ablate", "-c", str(reverse_checkpoint), "--heads", "cross.1.0,cross.1.1"], capsys)
    assert status == 0 and "heads off: cross.1.0, cross.1.1" in err
    assert ablated != plain and len(ablated.splitlines()) == 4 and ablated.splitlines()[2] == ""


@pytest.mark.parametrize(
    "bad", ["cross.2.0", "enc.0.2", "dec.5.0", "attn.0.0", "cross.1", "cross.x.0", "cross.0.0,enc.9.9"]
)
def test_wrong_head_names_list_the_valid_range(reverse_checkpoint, monkeypatch, capsys, bad):
    # The names are checked before anything is read from stdin.
    monkeypatch.setattr("sys.stdin", None)
    status, out, err = run(["ablate", "-c", str(reverse_checkpoint), "--heads", bad], capsys)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert "valid: enc.0-1.0-1, dec.0-1.0-1, cross.0-1.0-1" in err


def test_mean_ablation_runs_and_differs_from_zero(reverse_with_data, stdin, capsys, one_torch_thread):
    outputs = {}
    for mode in ("zero", "mean"):
        stdin(SENTENCES)
        status, outputs[mode], _ = run(
            [
                "ablate",
                "-c",
                str(reverse_with_data),
                "--heads",
                "cross.0.0,cross.0.1,cross.1.0,cross.1.1",
                "--mode",
                mode,
            ],
            capsys,
        )
        assert status == 0
    assert outputs["zero"] != outputs["mean"]


def test_heads_prints_the_role_table(reverse_checkpoint, tmp_path, capsys, one_torch_thread):
    sentences = tmp_path / "in.txt"
    sentences.write_text("a b c d e\nb c d e f g\nq r s t\n" * 3)
    status, out, _ = run(["heads", "-c", str(reverse_checkpoint), "--input", str(sentences)], capsys)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "head roles over 9 sentences (word level)"
    names = [line.split()[0] for line in lines[2:14]]
    assert names[:2] == ["enc.0.0", "enc.0.1"] and names[-1] == "cross.1.1"
    status, csv_text, _ = run(
        ["heads", "-c", str(reverse_checkpoint), "--input", str(sentences), "--csv", "--family", "cross"], capsys
    )
    assert csv_text.splitlines()[0].startswith("head,role,score,rule") and len(csv_text.splitlines()) == 5


def test_heads_without_known_data_asks_for_input(reverse_checkpoint, capsys):
    status, _, err = run(["heads", "-c", str(reverse_checkpoint)], capsys)
    assert status == 2 and "--input" in err


def test_importance_writes_csv_and_json(reverse_with_data, tmp_path, capsys, one_torch_thread):
    status, out, _ = run(
        [
            "importance",
            "-c",
            str(reverse_with_data),
            "--sentences",
            "5",
            "--no-pruning",
            "--out",
            str(tmp_path / "out"),
            "--top",
            "3",
        ],
        capsys,
    )
    assert status == 0
    table = json.loads((tmp_path / "out" / "head_importance.json").read_text())
    assert len(table["heads"]) == 12 and table["settings"]["sentences"] == 5 and table["pruning"] == {}
    assert len((tmp_path / "out" / "head_importance.csv").read_text().splitlines()) == 13
    assert out.startswith("BLEU with every head:") and len(out.splitlines()) == 1 + 3 + 1
