"""What the readers say about input that is not sentences, the same in the CLI and the app's uploads (both read
through explorer.data.corpus): binary data is called binary, UTF-16 is explained with how to re-save it, a stray
NUL byte is text (as the Translate box takes it), a file of blank lines has no sentences, and a TSV with several
bad lines names them."""

from __future__ import annotations

import io
import random

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.cli import main
from explorer.data.corpus import CorpusError, decode_text, tsv_from_bytes
from explorer.inference import translate

RANDOM_BYTES = random.Random(0).randbytes(4096)
UTF16 = "a b c\nc b a\n".encode("utf-16")  # with its byte-order mark, as Windows Notepad saves "Unicode"


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)), encoding="utf-8"))


def test_random_bytes_on_stdin_are_binary_not_latin1(reverse_checkpoint, monkeypatch, capsys):
    _stdin(monkeypatch, RANDOM_BYTES)
    assert main(["translate", "-c", str(reverse_checkpoint)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: standard input looks like a binary file, not text"), err
    assert "Latin-1" not in err


@pytest.mark.parametrize("data", [UTF16, "a b c\nc b a\n".encode("utf-16-le")], ids=["bom", "no-bom"])
def test_utf16_is_explained_on_stdin_and_from_a_file(data, reverse_checkpoint, monkeypatch, capsys, tmp_path):
    (tmp_path / "in.txt").write_bytes(data)
    assert main(["translate", "-c", str(reverse_checkpoint), "--input", str(tmp_path / "in.txt")]) == 2
    from_file = capsys.readouterr().err
    _stdin(monkeypatch, data)
    assert main(["translate", "-c", str(reverse_checkpoint)]) == 2
    from_stdin = capsys.readouterr().err
    for err, name in ((from_file, str(tmp_path / "in.txt")), (from_stdin, "standard input")):
        assert err.startswith(f"error: {name} is UTF-16 text, not UTF-8: re-save it as UTF-8"), err
        assert "binary" not in err
    with pytest.raises(CorpusError, match=r"^upload\.txt is UTF-16 text, not UTF-8: re-save it as UTF-8"):
        decode_text(data, "upload.txt")  # the app's uploads say the same


def test_one_nul_byte_is_translated_as_the_translate_box_does(reverse_checkpoint, monkeypatch, capsys):
    loaded = load_checkpoint(reverse_checkpoint)
    expected = [t.output for t in translate(loaded.model, loaded.tokenizer, ["a b", "c \x00d e"])]
    _stdin(monkeypatch, b"a b\nc \x00d e\n")
    assert main(["translate", "-c", str(reverse_checkpoint), "--beam", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == expected
    assert decode_text(b"a b\nc \x00d e\n", "upload.txt") == ["a b", "c \x00d e"]  # the app's batch upload


def test_a_file_of_blank_lines_has_no_sentences(reverse_checkpoint, tmp_path, capsys):
    (tmp_path / "src.txt").write_text("\n  \n\n")
    (tmp_path / "ref.txt").write_text("\n  \n\n")
    code = main(["evaluate", "-c", str(reverse_checkpoint), "--source", str(tmp_path / "src.txt"),
                 "--reference", str(tmp_path / "ref.txt")])  # fmt: skip
    assert code == 2
    assert "has no sentences (only blank lines)" in capsys.readouterr().err


def test_a_tsv_with_several_bad_lines_names_them():
    data = b"a\tb\nno tab\nc\td\nx\ty\tz\n\nalso none\n" + b"bad\n" * 10
    with pytest.raises(CorpusError) as caught:
        tsv_from_bytes(data, "pairs.tsv")
    assert str(caught.value) == (
        "pairs.tsv has 13 lines without exactly one TAB between source and target (TABs found in brackets): "
        "line 2 (0), line 4 (2), line 6 (0), line 7 (0), line 8 (0) and 8 more"
    )
    with pytest.raises(CorpusError, match=r"^pairs\.tsv line 2: expected exactly one TAB .*, found 0$"):
        tsv_from_bytes(b"a\tb\nno tab\n", "pairs.tsv")  # one bad line: named as before


def test_train_on_a_tsv_with_several_bad_lines(tmp_path, capsys):
    (tmp_path / "pairs.tsv").write_text("a\tb\nno tab\nc\td\nx\ty\tz\n")
    assert main(["train", "--data", str(tmp_path / "pairs.tsv"), "--out", str(tmp_path / "run")]) == 2
    assert "line 2 (0), line 4 (2)" in capsys.readouterr().err
