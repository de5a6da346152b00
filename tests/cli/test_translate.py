"""`explorer translate` on real input: line count kept, any bytes refused in one line, streaming batches,
the checkpoint's own decoding defaults, lines of several sentences and
repeated phrases."""

from __future__ import annotations

import dataclasses
import inspect
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.checkpoint import load_checkpoint
from explorer.cli import main
from explorer.decoding import output_loop
from explorer.inference import translate

REPO_ROOT = Path(__file__).resolve().parents[2]


def _stdin(monkeypatch, data: bytes) -> None:
    """Stdin as a real process has it: a text wrapper over bytes, read through `.buffer`."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _expected(checkpoint_path, sentences):
    checkpoint = load_checkpoint(checkpoint_path)
    return [t.output for t in translate(checkpoint.model, checkpoint.tokenizer, sentences, beam_size=4)]


def test_blank_lines_keep_their_place(reverse_checkpoint, capsys, monkeypatch):
    _stdin(monkeypatch, b"a b c\n\n   \nd e f g\n\n")
    code, out, err = _run(["translate", "-c", str(reverse_checkpoint)], capsys)
    first, second = _expected(reverse_checkpoint, ["a b c", "d e f g"])
    assert code == 0 and err == ""
    assert out.split("\n") == [first, "", "", second, "", ""]  # five lines in, five lines out


def test_blank_argument_gives_a_blank_line(reverse_checkpoint, capsys):
    code, out, _ = _run(["translate", "-c", str(reverse_checkpoint), "a b c", "", "d e f g"], capsys)
    assert code == 0 and out.splitlines()[1] == "" and len(out.splitlines()) == 3


def test_crlf_and_bom_are_accepted(reverse_checkpoint, capsys, monkeypatch):
    _stdin(monkeypatch, b"\xef\xbb\xbfa b c\r\n\r\nd e f g\r\n")
    code, out, _ = _run(["translate", "-c", str(reverse_checkpoint)], capsys)
    first, second = _expected(reverse_checkpoint, ["a b c", "d e f g"])
    assert code == 0 and out.splitlines() == [first, "", second]


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_latin1_input_names_line_and_byte_and_the_fix(reverse_checkpoint, tmp_path, capsys, monkeypatch, source):
    data = "a b c\nd e f\nun caf\xe9 cr\xe8me\n".encode("latin-1")
    args = ["translate", "-c", str(reverse_checkpoint)]
    if source == "stdin":
        _stdin(monkeypatch, data)
        name = "standard input"
    else:
        (tmp_path / "in.txt").write_bytes(data)
        args += ["--input", str(tmp_path / "in.txt")]
        name = str(tmp_path / "in.txt")
    code, out, err = _run(args, capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(
        f"error: {name} is not valid UTF-8: line 3, byte 7 of that line (byte 18 of the file, value 0xe9)"
    )
    assert "iconv -f latin1 -t utf-8" in err
    assert out.splitlines() == _expected(reverse_checkpoint, ["a b c", "d e f"]), "lines before the bad one"


def _binary_inputs():
    rng = random.Random(12)
    yield bytes(range(256))
    yield b"\x00" * 64
    yield b"PK\x03\x04" + bytes(rng.randrange(256) for _ in range(4000))
    yield "a b\n".encode("utf-16")
    yield b"\xff" * 10
    yield b"a b c\n" + b"x" * (1024 * 1024 + 10) + b"\n"  # a "line" of more than 1 MB
    for _ in range(20):
        yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))


@pytest.mark.parametrize("data", list(_binary_inputs()), ids=lambda d: f"{len(d)}-bytes")
def test_any_bytes_on_stdin_end_in_one_line_or_a_translation(reverse_checkpoint, capsys, monkeypatch, data):
    _stdin(monkeypatch, data)
    code, out, err = _run(["translate", "-c", str(reverse_checkpoint)], capsys)
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("error: standard input") and err.count("\n") == 1, err
    else:  # random bytes that happen to be UTF-8 text: translated, one output line per input line
        lines_in = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        assert out.count("\n") == lines_in


def test_a_real_process_prints_no_traceback(reverse_checkpoint):
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "translate", "-c", str(reverse_checkpoint)],
        input="caf\xe9\n".encode("latin-1"),
        capture_output=True,
        cwd=REPO_ROOT,
        timeout=120,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
    )
    err = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert "line 1, byte 4" in err


class _WatchedStdin:
    """Stdin whose reads check how much output was already written: streaming means earlier batches are out
    (and flushed) before later lines are even read."""

    def __init__(self, lines: list[bytes], stdout: _CountingStdout, batch: int) -> None:
        self.buffer, self.lines, self.stdout, self.batch, self.served = self, lines, stdout, batch, 0
        self.seen: list[tuple[int, int]] = []  # (lines served, lines flushed to stdout)

    def isatty(self) -> bool:
        return False

    def readline(self, limit: int = -1) -> bytes:
        self.seen.append((self.served, self.stdout.flushed_lines))
        if self.served == len(self.lines):
            return b""
        self.served += 1
        return self.lines[self.served - 1]


class _CountingStdout(io.StringIO):
    flushed_lines = 0

    def flush(self) -> None:
        self.flushed_lines = self.getvalue().count("\n")


def test_translation_streams_in_batches(reverse_checkpoint, monkeypatch):
    out = _CountingStdout()
    stdin = _WatchedStdin([b"a b c\n", b"d e\n", b"\n", b"f g h\n", b"a a b\n", b"c\n", b"d d\n"], out, batch=3)
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["translate", "-c", str(reverse_checkpoint), "--batch-lines", "3", "--beam", "1"]) == 0
    # Before line 4 is read, lines 1-3 are written and flushed; before line 7, lines 1-6.
    assert (3, 3) in stdin.seen and (6, 6) in stdin.seen, stdin.seen
    assert out.getvalue().count("\n") == 7


def test_progress_bar_only_on_a_terminal(reverse_checkpoint, capsys, monkeypatch):
    _stdin(monkeypatch, b"a b c\nd e f\n")
    code, _, err = _run(["translate", "-c", str(reverse_checkpoint)], capsys)
    assert code == 0 and err == ""
    _stdin(monkeypatch, b"a b c\nd e f\n")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = _run(["translate", "-c", str(reverse_checkpoint)], capsys)
    assert code == 0 and "2 lines" in err and "lines" not in out


def test_empty_input_is_an_error(reverse_checkpoint, capsys, monkeypatch):
    _stdin(monkeypatch, b"")
    code, _, err = _run(["translate", "-c", str(reverse_checkpoint)], capsys)
    assert code == 2 and err.startswith("error: nothing to translate")


def test_decoding_defaults_come_from_the_checkpoint(reverse_checkpoint, tmp_path, capsys, monkeypatch):
    import shutil

    import explorer.inference

    path = tmp_path / "ckpt"
    shutil.copytree(reverse_checkpoint, path)
    data = json.loads((path / "config.json").read_text())
    data["metadata"]["decoding"] = {"beam": 2, "alpha": 1.25}
    (path / "config.json").write_text(json.dumps(data))
    calls = []
    real = explorer.inference.translate

    def recording(*args, **kwargs):
        calls.append((kwargs["beam_size"], kwargs["alpha"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(explorer.inference, "translate", recording)
    assert _run(["translate", "-c", str(path), "a b c"], capsys)[0] == 0
    assert _run(["translate", "-c", str(path), "--beam", "3", "a b c"], capsys)[0] == 0
    assert _run(["translate", "-c", str(reverse_checkpoint), "a b c"], capsys)[0] == 0
    assert calls == [(2, 1.25), (3, 1.25), (4, 0.6)]
    code, out, _ = _run(["info", "-c", str(path)], capsys)
    assert code == 0 and json.loads(out)["decoding"] == {"beam": 2, "alpha": 1.25, "from": "checkpoint"}


# --- lines of several sentences ----------------------------------------------------------

THREE = [
    "a man rides a bicycle . the dog walks in the park . a small child sees the red dog .",
    "the woman sees a dog . a big man walks on the street . the child rides a bicycle .",
]


def _alone(checkpoint_path, sentence: str, **options) -> str:
    """The translation of `sentence` given on its own, in a call of its own."""
    checkpoint = load_checkpoint(checkpoint_path)
    (found,) = translate(checkpoint.model, checkpoint.tokenizer, [sentence], **{"beam_size": 4, **options})
    return found.output


def test_three_sentence_lines_are_split_translated_alone_and_joined(words_checkpoint, capsys, monkeypatch):
    _stdin(monkeypatch, ("\n".join([THREE[0], "", THREE[1], "a man rides a bicycle ."]) + "\n").encode())
    code, out, err = _run(["translate", "-c", str(words_checkpoint)], capsys)
    assert code == 0 and err == ""
    lines = out.split("\n")
    assert len(lines) == 5 and lines[-1] == "", "four lines in, four lines out"
    for line, source in zip(lines, [THREE[0], "", THREE[1], "a man rides a bicycle ."], strict=False):
        sentences = [s.strip() + " ." for s in source.split(" .") if s.strip()]
        assert line == " ".join(_alone(words_checkpoint, s) for s in sentences)
    assert len([s for s in THREE[0].split(" .") if s.strip()]) == 3


def test_no_split_translates_the_line_as_it_stands(words_checkpoint, capsys):
    code, out, _ = _run(["translate", "-c", str(words_checkpoint), "--no-split", THREE[0]], capsys)
    assert code == 0 and out.splitlines() == [_alone(words_checkpoint, THREE[0])]


def test_json_of_a_three_sentence_line_has_one_row_per_sentence(words_checkpoint, capsys):
    code, out, _ = _run(["translate", "-c", str(words_checkpoint), "--json", "--n-best", "2", THREE[0], ""], capsys)
    row, blank = (json.loads(line) for line in out.splitlines())
    assert code == 0 and set(row) == set(blank)
    assert row["source"] == THREE[0] and len(row["sentences"]) == 3
    assert [s["source"] for s in row["sentences"]] == [
        "a man rides a bicycle .",
        "the dog walks in the park .",
        "a small child sees the red dog .",
    ]
    assert row["translation"] == " ".join(s["translation"] for s in row["sentences"])
    assert row["log_prob"] == pytest.approx(sum(s["log_prob"] for s in row["sentences"]))
    assert row["source_pieces"] == [p for s in row["sentences"] for p in s["source_pieces"]]
    assert row["nbest"] == [] and all(len(s["nbest"]) == 2 for s in row["sentences"])
    assert blank["sentences"] == [] and blank["repeated"] is False
    code, out, _ = _run(["translate", "-c", str(words_checkpoint), "--json", "a man rides a bicycle ."], capsys)
    (single,) = (json.loads(line) for line in out.splitlines())
    assert single["sentences"] == [{k: v for k, v in single.items() if k != "sentences"}]


# --- repeated phrases --------------------------------------------------------------------


def test_json_marks_repeated_outputs(reverse_checkpoint, words_checkpoint, capsys, monkeypatch):
    """`repeated` is the output's own verdict: a phrase of two or more words three times in a row."""
    sources = ["a b a b a b", "a b c", "h e l l o"]
    code, out, _ = _run(["translate", "-c", str(reverse_checkpoint), "--json", *sources], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    checkpoint = load_checkpoint(reverse_checkpoint)
    alone = translate(checkpoint.model, checkpoint.tokenizer, sources, beam_size=4)
    assert [r["repeated"] for r in rows] == [output_loop(t.output, t.target_output_pieces) is not None for t in alone]
    # Whatever the fixture model makes of it, an output that loops is marked (and only that line).
    import explorer.inference

    real = explorer.inference.translate

    def looping(*args, **kwargs):
        found = real(*args, **kwargs)
        return [dataclasses.replace(t, output="b a b a b a") if t.source == sources[0] else t for t in found]

    monkeypatch.setattr(explorer.inference, "translate", looping)
    code, out, _ = _run(["translate", "-c", str(reverse_checkpoint), "--json", sources[0], "d e f g"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[0]["repeated"] is True
    assert rows[1]["repeated"] == (output_loop(rows[1]["translation"], rows[1]["output_pieces"]) is not None)
    monkeypatch.undo()
    code, out, _ = _run(["translate", "-c", str(words_checkpoint), "--json", THREE[0]], capsys)
    (row,) = (json.loads(line) for line in out.splitlines())
    assert row["repeated"] == any(s["repeated"] for s in row["sentences"])


def _repeats_a_piece_bigram(tokens: list[int]) -> bool:
    grams = list(zip(tokens, tokens[1:], strict=False))
    return len(grams) != len(set(grams))


@pytest.mark.skipif(
    "no_repeat_ngram" not in inspect.signature(translate).parameters,
    reason="explorer.inference.translate does not pass no_repeat_ngram to the search yet",
)
def test_no_repeat_ngram_flag_reaches_the_search(reverse_checkpoint, capsys):
    sources = ["a b a b a b", "a b c"]
    code, out, _ = _run(
        ["translate", "-c", str(reverse_checkpoint), "--json", "--no-repeat-ngram", "2", *sources], capsys
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    for row, source in zip(rows, sources, strict=True):
        assert row["translation"] == _alone(reverse_checkpoint, source, no_repeat_ngram=2)
        assert not _repeats_a_piece_bigram(row["nbest"][0]["tokens"])
    assert any(r["translation"] != _alone(reverse_checkpoint, s) for r, s in zip(rows, sources, strict=True))


def test_no_repeat_ngram_must_be_a_positive_whole_number(reverse_checkpoint, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["translate", "-c", str(reverse_checkpoint), "--no-repeat-ngram", "0", "a b"])
    assert exited.value.code == 2 and "at least 1" in capsys.readouterr().err
