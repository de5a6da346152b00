"""Parallel corpora read from bytes (uploads) or files, with errors a user can act on.

Every `CorpusError` names the file as the user knows it (the upload's name, or the file name) and, where one
line is at fault, the line number (1-based, as editors count).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_BOM = b"\xef\xbb\xbf"
_BINARY_SAMPLE = 64 * 1024  # bytes of a file inspected for control characters
MAX_LINE_BYTES = 1024 * 1024  # one sentence per line: a longer "line" is a file in another format
MIN_TRAINING_PAIRS = 2  # one to train on, one held out for validation


class CorpusError(ValueError):
    """A file that cannot be used as a corpus; the message names the file and says what to fix."""


@dataclass(frozen=True)
class ParallelCorpus:
    """Aligned sentence pairs: `source[i]` translates to `target[i]`.

    `dropped` counts the pairs left out because one side was empty or a placeholder (see `is_placeholder`).
    """

    name: str
    source: tuple[str, ...]
    target: tuple[str, ...]
    dropped: int = 0

    def __post_init__(self) -> None:
        assert len(self.source) == len(self.target), (
            f"source and target must be aligned, got {len(self.source)} and {len(self.target)} sentences"
        )

    def __len__(self) -> int:
        return len(self.source)

    def preview(self, n: int = 5) -> list[tuple[str, str]]:
        """The first `n` pairs, for showing the user what was read."""
        return list(zip(self.source[:n], self.target[:n], strict=True))


# ---------------------------------------------------------------------------------------------- text
# What is text. A stray control character (a NUL pasted from a terminal, a form feed) does not make a file
# binary: the Translate box takes such a sentence and the model reads the character as an unknown piece, so
# every reader here keeps it too. Binary data (an archive, a model, random bytes) is told apart by its share of
# control characters, UTF-16 text by its byte-order mark or its NUL bytes between ASCII letters.
_BINARY_CONTROL_SHARE = 0.05  # random bytes hold about 11 %, text almost none
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")  # control characters, less TAB, LF, VT, FF and CR
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF16_NUL_SHARE = 0.25  # UTF-16 ASCII text is half NUL bytes


def _controls(sample: bytes) -> int:
    return len(_CONTROL.findall(sample))


def _nuls_between_letters(sample: bytes) -> bool:
    """UTF-16 without a byte-order mark: ASCII letters each followed (or preceded) by a NUL, so many NULs, all at
    odd positions or all at even ones."""
    nuls = sample.count(0)
    if nuls < 2 or nuls < _UTF16_NUL_SHARE * len(sample):
        return False
    return max(sample[0::2].count(0), sample[1::2].count(0)) >= 0.9 * nuls


def _not_text(sample: bytes, where: str, *, starts_file: bool) -> str | None:
    """Why `sample` (the start of a file, or one line of it) is not UTF-8 text, or None when it may be.

    `where` names the file (and line) as the user knows it; `starts_file`: the sample is the file's first bytes.
    """
    if (starts_file and sample.startswith(_UTF16_BOMS)) or _nuls_between_letters(sample):
        return (
            f"{where} is UTF-16 text, not UTF-8: re-save it as UTF-8 (e.g. `iconv -f utf-16 -t utf-8`, or "
            "'Save as... UTF-8' in an editor; Windows Notepad calls UTF-16 'Unicode')"
        )
    controls = _controls(sample)
    if controls >= 2 and controls > _BINARY_CONTROL_SHARE * len(sample):
        return (
            f"{where} looks like a binary file, not text ({controls} of its {len(sample)} bytes are control "
            "characters). Expected plain UTF-8 text, one sentence per line."
        )
    return None


def decode_text(data: bytes, name: str, max_bytes: int | None = None) -> list[str]:
    """Lines of a UTF-8 text file (a BOM and CRLF line ends are accepted), or a CorpusError saying why not.

    Lines are returned unchanged apart from the line end, so item i of the result is line i+1 of the file.
    """
    if max_bytes is not None and len(data) > max_bytes:
        raise CorpusError(f"{name} is {_size(len(data))}; the limit is {_size(max_bytes)}")
    problem = _not_text(data[:_BINARY_SAMPLE], name, starts_file=True)
    if problem is not None:
        raise CorpusError(problem)
    skip = len(_BOM) if data.startswith(_BOM) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = skip + err.start  # byte offset in the file
        line_start = data.rfind(b"\n", 0, offset) + 1
        line = data.count(b"\n", 0, offset) + 1
        raise CorpusError(_not_utf8(name, line, offset - line_start + 1, offset, data[offset])) from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines:
        raise CorpusError(f"{name} is empty")
    if not any(line.strip() for line in lines):
        raise CorpusError(f"{name} has no sentences (only blank lines)")
    return lines


def _not_utf8(name: str, line: int, column: int, offset: int, value: int) -> str:
    """One line saying where the first byte that is not UTF-8 sits, and how to convert the file."""
    return (
        f"{name} is not valid UTF-8: line {line}, byte {column} of that line (byte {offset} of the file, "
        f"value 0x{value:02x}) cannot be decoded. The file is probably in another encoding such as Latin-1 "
        "or Windows-1252; re-save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`, or 'Save as... UTF-8' in an editor)."
    )


def iter_lines(stream: BinaryIO, name: str, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[str]:
    """Lines of a UTF-8 byte stream (stdin, a file), decoded one at a time so memory stays flat.

    Like `decode_text`: a BOM and CRLF line ends are accepted, item i is line i+1, blank lines included, and a
    stray control character (a NUL) is kept as text. Bytes that are not UTF-8, UTF-16 text, binary data or a
    line longer than `max_line_bytes` raise a CorpusError naming the line; the lines before it have already
    been yielded.
    """
    # The start of the stream as a whole where it can be seen without reading it (a file, a pipe: one read at
    # most), so random bytes are called binary even when their first "line" is a few bytes long.
    peek = getattr(stream, "peek", None)
    problem = _not_text(peek(_BINARY_SAMPLE)[:_BINARY_SAMPLE], name, starts_file=True) if peek is not None else None
    if problem is not None:
        raise CorpusError(problem)
    offset = 0  # bytes of the stream before the current line
    for number, raw in enumerate(iter(lambda: stream.readline(max_line_bytes + 1), b""), start=1):
        if len(raw) > max_line_bytes:
            raise CorpusError(
                f"{name} line {number} is longer than {_size(max_line_bytes)}; expected plain text "
                "with one sentence per line"
            )
        where = f"{name} line {number}" if number > 1 else name
        problem = _not_text(raw, where, starts_file=number == 1) if number == 1 or _CONTROL.search(raw) else None
        if problem is not None:
            raise CorpusError(problem)
        skip = len(_BOM) if number == 1 and raw.startswith(_BOM) else 0
        try:
            text = raw[skip:].decode("utf-8")
        except UnicodeDecodeError as err:
            column = skip + err.start
            raise CorpusError(_not_utf8(name, number, column + 1, offset + column, raw[column])) from None
        offset += len(raw)
        text = text[:-1] if text.endswith("\n") else text
        yield text[:-1] if text.endswith("\r") else text


def is_placeholder(sentence: str) -> bool:
    """True for a side with no letter or digit: empty, or filler such as Multi30k's '@@' lines."""
    return not any(ch.isalnum() for ch in sentence)


def _pairs(name: str, source: list[str], target: list[str]) -> ParallelCorpus:
    """Keep the pairs whose both sides are real sentences; count the others."""
    kept_src, kept_tgt = [], []
    for src, tgt in zip(source, target, strict=True):
        src, tgt = src.strip(), tgt.strip()
        if is_placeholder(src) or is_placeholder(tgt):
            continue
        kept_src.append(src)
        kept_tgt.append(tgt)
    if not kept_src:
        raise CorpusError(f"{name} has no usable sentence pairs (every pair had an empty or placeholder side)")
    return ParallelCorpus(name, tuple(kept_src), tuple(kept_tgt), dropped=len(source) - len(kept_src))


def parallel_from_bytes(
    src: bytes,
    tgt: bytes,
    src_name: str,
    tgt_name: str,
    max_bytes: int | None = None,
    *,
    name: str | None = None,
) -> ParallelCorpus:
    """A corpus from two aligned files: line i of `src` translates to line i of `tgt`.

    Pairs with an empty or placeholder side are dropped and counted in `dropped`. `max_bytes` applies to each
    file. `name` defaults to "src_name + tgt_name".
    """
    source = decode_text(src, src_name, max_bytes)
    target = decode_text(tgt, tgt_name, max_bytes)
    if len(source) != len(target):
        # Blank lines at the end are often an editor's doing, not a missing sentence: forgive those.
        source, target = _trim_blank_tail(source), _trim_blank_tail(target)
    if len(source) != len(target):
        longer, shorter = (src_name, tgt_name) if len(source) > len(target) else (tgt_name, src_name)
        first_unpaired = min(len(source), len(target)) + 1
        raise CorpusError(
            f"{src_name} has {len(source)} lines but {tgt_name} has {len(target)} (not counting blank lines "
            f"at the end): from line {first_unpaired} on, {longer} has lines with no partner in {shorter}. The "
            "two files must be aligned line by line (line i of one translates line i of the other)"
        )
    return _pairs(name or f"{src_name} + {tgt_name}", source, target)


def require_training_pairs(train: ParallelCorpus, validation: ParallelCorpus) -> None:
    """Refuse a corpus too small to train on, before a tokenizer or model is built for it.

    Training needs at least one pair to learn from and one held out to measure it (`MIN_TRAINING_PAIRS`).
    """
    total = len(train) + len(validation)
    if len(train) >= 1 and len(validation) >= 1:
        return
    name = train.name.removesuffix(" (train)")
    dropped = f" ({train.dropped} more had an empty or placeholder side)" if train.dropped else ""
    raise CorpusError(
        f"{name} has {total} usable sentence pair{'' if total == 1 else 's'}{dropped}; training needs at least "
        f"{MIN_TRAINING_PAIRS}: one to learn from and one held out to measure it"
    )


def _trim_blank_tail(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def tsv_from_bytes(data: bytes, name: str, max_bytes: int | None = None) -> ParallelCorpus:
    """A corpus from one file with `source<TAB>target` per line; blank lines are skipped.

    Only for uploads: a TAB inside a sentence cannot be told from the separator (Multi30k's train.de line
    7366 holds one), so the bundled data is read with `parallel_from_bytes`.
    """
    source, target = [], []
    bad: list[tuple[int, int]] = []  # (line number, TABs found)
    for number, line in enumerate(decode_text(data, name, max_bytes), start=1):
        if not line.strip():
            continue
        tabs = line.count("\t")
        if tabs != 1:
            bad.append((number, tabs))
            continue
        src, tgt = line.split("\t")
        source.append(src)
        target.append(tgt)
    if len(bad) == 1:
        number, tabs = bad[0]
        raise CorpusError(f"{name} line {number}: expected exactly one TAB between source and target, found {tabs}")
    if bad:
        shown = ", ".join(f"line {number} ({tabs})" for number, tabs in bad[:_BAD_LINES_SHOWN])
        more = f" and {len(bad) - _BAD_LINES_SHOWN} more" if len(bad) > _BAD_LINES_SHOWN else ""
        raise CorpusError(
            f"{name} has {len(bad)} lines without exactly one TAB between source and target "
            f"(TABs found in brackets): {shown}{more}"
        )
    return _pairs(name, source, target)


_BAD_LINES_SHOWN = 5  # a message names this many bad lines of a file, then counts the rest


def _read_bytes(path: str | Path) -> bytes:
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"{path.name}: file not found at {path}") from None
    except OSError as err:
        raise CorpusError(f"{path.name}: cannot read {path} ({err.strerror or err})") from None


def read_parallel(src_path: str | Path, tgt_path: str | Path, max_bytes: int | None = None) -> ParallelCorpus:
    """`parallel_from_bytes` for two files on disk; errors name the files by their file names."""
    src_path, tgt_path = Path(src_path), Path(tgt_path)
    return parallel_from_bytes(_read_bytes(src_path), _read_bytes(tgt_path), src_path.name, tgt_path.name, max_bytes)


def read_tsv(path: str | Path, max_bytes: int | None = None) -> ParallelCorpus:
    """`tsv_from_bytes` for a file on disk."""
    path = Path(path)
    return tsv_from_bytes(_read_bytes(path), path.name, max_bytes)


def read_sentences(data: bytes, name: str, max_bytes: int, max_lines: int) -> list[str]:
    """Sentences to translate, one per line; blank lines are skipped, surrounding spaces removed."""
    sentences = [line.strip() for line in decode_text(data, name, max_bytes)]
    sentences = [s for s in sentences if s]  # decode_text refused a file of blank lines: one at least is left
    if len(sentences) > max_lines:
        raise CorpusError(f"{name} has {len(sentences)} sentences; the limit is {max_lines}")
    return sentences


def _size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} bytes"
    if n_bytes < 1024 * 1024:
        return f"{n_bytes / 1024:.1f} KB"
    return f"{n_bytes / (1024 * 1024):.1f} MB"
