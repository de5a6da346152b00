"""Parallel corpora read from bytes (uploads) or files, with errors a user can act on.

Every `CorpusError` names the file as the user knows it (the upload's name, or the file name) and, where one
line is at fault, the line number (1-based, as editors count).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_BOM = b"\xef\xbb\xbf"
_BINARY_SAMPLE = 64 * 1024  # bytes inspected for control characters
_BINARY_CONTROL_SHARE = 0.10  # more control characters than this in the sample: not text
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v")
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
def decode_text(data: bytes, name: str, max_bytes: int | None = None) -> list[str]:
    """Lines of a UTF-8 text file (a BOM and CRLF line ends are accepted), or a CorpusError saying why not.

    Lines are returned unchanged apart from the line end, so item i of the result is line i+1 of the file.
    """
    if max_bytes is not None and len(data) > max_bytes:
        raise CorpusError(f"{name} is {_size(len(data))}; the limit is {_size(max_bytes)}")
    if b"\x00" in data:
        raise CorpusError(
            f"{name} looks like a binary file (it contains NUL bytes). Expected plain UTF-8 text; "
            "a UTF-16 text file also looks like this: re-save it as UTF-8."
        )
    sample = data[:_BINARY_SAMPLE]
    controls = sum(1 for byte in sample if (byte < 32 and byte not in _TEXT_CONTROLS) or byte == 127)
    if controls > _BINARY_CONTROL_SHARE * len(sample):
        raise CorpusError(
            f"{name} looks like a binary file ({controls} of its first {len(sample)} bytes are control "
            "characters). Expected plain UTF-8 text, one sentence per line."
        )
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
    if not any(line.strip() for line in lines):
        raise CorpusError(f"{name} is empty")
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

    Like `decode_text`: a BOM and CRLF line ends are accepted and item i is line i+1, blank lines included.
    Bytes that are not UTF-8, a NUL byte (binary data) or a line longer than `max_line_bytes` raise a
    CorpusError naming the line; the lines before it have already been yielded.
    """
    offset = 0  # bytes of the stream before the current line
    for number, raw in enumerate(iter(lambda: stream.readline(max_line_bytes + 1), b""), start=1):
        if len(raw) > max_line_bytes:
            raise CorpusError(
                f"{name} line {number} is longer than {_size(max_line_bytes)}; expected plain text "
                "with one sentence per line"
            )
        nul = raw.find(0)
        if nul >= 0:
            raise CorpusError(
                f"{name} line {number} contains a NUL byte (byte {offset + nul} of the file): this "
                "looks like a binary file, not UTF-8 text with one sentence per line"
            )
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
    for number, line in enumerate(decode_text(data, name, max_bytes), start=1):
        if not line.strip():
            continue
        tabs = line.count("\t")
        if tabs != 1:
            raise CorpusError(f"{name} line {number}: expected exactly one TAB between source and target, found {tabs}")
        src, tgt = line.split("\t")
        source.append(src)
        target.append(tgt)
    return _pairs(name, source, target)


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
    sentences = [s for s in sentences if s]
    if not sentences:
        raise CorpusError(f"{name} has no sentences (only blank lines)")
    if len(sentences) > max_lines:
        raise CorpusError(f"{name} has {len(sentences)} sentences; the limit is {max_lines}")
    return sentences


def _size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} bytes"
    if n_bytes < 1024 * 1024:
        return f"{n_bytes / 1024:.1f} KB"
    return f"{n_bytes / (1024 * 1024):.1f} MB"
