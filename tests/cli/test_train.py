"""`explorer train` refuses data and flags it cannot use, naming the file and line, before any tokenizer or
model is built."""

from __future__ import annotations

import pytest

from explorer.cli import main


@pytest.fixture
def nothing_is_built(monkeypatch):
    """Building a tokenizer or a trainer fails the test: the refusal must come first."""
    import explorer.training.datasets
    import explorer.training.trainer

    def forbidden(*args, **kwargs):
        raise AssertionError("a tokenizer or model was built before the input was checked")

    monkeypatch.setattr(explorer.training.datasets, "train_tokenizer", forbidden)
    monkeypatch.setattr(explorer.training.trainer, "Trainer", forbidden)


def _train(args, capsys):
    code = main(["train", "--steps", "1", "--quiet", *args])
    return code, capsys.readouterr().err


def test_one_pair_is_refused(tmp_path, capsys, nothing_is_built):
    (tmp_path / "one.tsv").write_text("a man rides\tein Mann reitet\n")
    code, err = _train(["--data", str(tmp_path / "one.tsv"), "--out", str(tmp_path / "run")], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: one.tsv has 1 usable sentence pair; training needs at least 2")
    assert not (tmp_path / "run").exists()


def test_files_with_different_line_counts_are_refused(tmp_path, capsys, nothing_is_built):
    (tmp_path / "src.txt").write_text("a man\ntwo dogs\nthree cats\n")
    (tmp_path / "tgt.txt").write_text("ein Mann\nzwei Hunde\n")
    code, err = _train(
        ["--data", f"{tmp_path / 'src.txt'},{tmp_path / 'tgt.txt'}", "--out", str(tmp_path / "run")], capsys
    )
    assert code == 2 and err.count("\n") == 1
    assert "src.txt has 3 lines but tgt.txt has 2" in err and "from line 3 on, src.txt has lines with no partner" in err


def test_tsv_row_without_a_tab_is_refused(tmp_path, capsys, nothing_is_built):
    (tmp_path / "pairs.tsv").write_text("a man\tein Mann\ntwo dogs zwei Hunde\n")
    code, err = _train(["--data", str(tmp_path / "pairs.tsv"), "--out", str(tmp_path / "run")], capsys)
    assert code == 2 and err == "error: pairs.tsv line 2: expected exactly one TAB between source and target, found 0\n"


def test_latin1_corpus_is_refused(tmp_path, capsys, nothing_is_built):
    (tmp_path / "pairs.tsv").write_bytes("un caf\xe9\tein Kaffee\n".encode("latin-1"))
    code, err = _train(["--data", str(tmp_path / "pairs.tsv"), "--out", str(tmp_path / "run")], capsys)
    assert code == 2 and "pairs.tsv is not valid UTF-8: line 1" in err and "iconv" in err


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--heads", "3"], "d_model=64 is not divisible by n_heads=3"),
        (["--heads", "0"], "n_heads must be a whole number from 1"),
        (["--max-len", "1000000000000"], "max_len must be a whole number"),
        (["--dropout", "-0.5"], "dropout must be a number from 0"),
        (["--dropout", "nan"], "dropout must be a number from 0"),
    ],
)
def test_impossible_model_flags_are_refused_before_reading_data(
    tmp_path, capsys, nothing_is_built, monkeypatch, flags, message
):
    import explorer.training.datasets

    monkeypatch.setattr(
        explorer.training.datasets,
        "load_corpora",
        lambda *a, **k: pytest.fail("data was read before the flags were checked"),
    )
    code, err = _train(["--data", "reverse", "--out", str(tmp_path / "run"), *flags], capsys)
    assert code == 2 and err.startswith(f"error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize(
    "flags", [["--steps", "0"], ["--batch-tokens", "-5"], ["--warmup", "x"], ["--lr-scale", "inf"]]
)
def test_bad_numbers_are_one_usage_line(tmp_path, capsys, flags):
    with pytest.raises(SystemExit) as exited:
        main(["train", "--out", str(tmp_path / "run"), *flags])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and err.startswith("explorer train: error: argument")


def test_eval_and_save_every_accept_zero_for_never_and_refuse_negatives():
    # 0 turns evaluation or saving off (the DDP test and quick runs rely on it); a negative count is a typo.
    from explorer.cli import build_parser

    args = build_parser().parse_args(["train", "--out", "x", "--eval-every", "0", "--save-every", "0"])
    assert (args.eval_every, args.save_every) == (0, 0)
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["train", "--out", "x", "--eval-every", "-1"])
    assert exit_info.value.code == 2
