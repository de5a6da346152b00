"""Corpus reading: every bad input gives a CorpusError naming the file (and line); Multi30k loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.data.corpus import (
    CorpusError,
    ParallelCorpus,
    decode_text,
    iter_lines,
    parallel_from_bytes,
    read_parallel,
    read_sentences,
    read_tsv,
    require_training_pairs,
    tsv_from_bytes,
)
from explorer.data.multi30k import DataUnavailableError, load_multi30k, shared_multi30k_dir

SHARED_MULTI30K = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "multi30k"


def test_decode_accepts_bom_and_crlf() -> None:
    data = "\ufeffEin Hund.\r\nZwei Hunde.\r\n".encode("utf-8")
    assert decode_text(data, "x.de") == ["Ein Hund.", "Zwei Hunde."]


def test_decode_keeps_every_line() -> None:
    assert decode_text(b"a\n\nb\n\n", "x.txt") == ["a", "", "b", ""]
    assert decode_text(b"a\nb", "x.txt") == ["a", "b"]


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf"])
def test_empty_file(data: bytes) -> None:
    with pytest.raises(CorpusError, match=r"^upload\.en is empty"):
        decode_text(data, "upload.en")


@pytest.mark.parametrize("data", [b"\n\n", b"   \r\n"])
def test_a_file_of_blank_lines_has_no_sentences(data: bytes) -> None:
    with pytest.raises(CorpusError, match=r"^upload\.en has no sentences \(only blank lines\)$"):
        decode_text(data, "upload.en")


def test_binary_file_with_nul_bytes() -> None:
    with pytest.raises(CorpusError, match=r"model\.pt looks like a binary file"):
        decode_text(b"PK\x03\x04\x00\x00abc", "model.pt")


def test_binary_file_with_many_control_characters() -> None:
    data = bytes(range(1, 32)) * 20 + b"some text"
    with pytest.raises(CorpusError, match=r"blob\.bin looks like a binary file"):
        decode_text(data, "blob.bin")


def test_latin1_names_line_and_byte() -> None:
    data = "Ein Hund.\nZwei Hunde.\nDas Mädchen.\n".encode("latin-1")
    with pytest.raises(CorpusError) as info:
        decode_text(data, "train.de")
    message = str(info.value)
    assert message.startswith("train.de is not valid UTF-8: line 3, byte 6 of that line")
    assert "0xe4" in message and "UTF-8" in message


def test_too_large() -> None:
    with pytest.raises(CorpusError, match=r"big\.en is 2\.0 KB; the limit is 1\.0 KB"):
        decode_text(b"a\n" * 1024, "big.en", max_bytes=1024)


def test_parallel_pairs_and_dropped_placeholders() -> None:
    src = b"A dog.\nA cat.\nTwo men.\nA bird.\n"
    tgt = "Ein Hund.\n@@\nZwei Männer.\n\n".encode()
    corpus = parallel_from_bytes(src, tgt, "a.en", "a.de")
    assert isinstance(corpus, ParallelCorpus)
    assert corpus.source == ("A dog.", "Two men.") and corpus.target == ("Ein Hund.", "Zwei Männer.")
    assert corpus.dropped == 2 and len(corpus) == 2
    assert corpus.preview(1) == [("A dog.", "Ein Hund.")]
    assert corpus.name == "a.en + a.de"


def test_parallel_line_count_mismatch_names_both_files() -> None:
    with pytest.raises(CorpusError, match=r"^up\.en has 3 lines but up\.de has 2"):
        parallel_from_bytes(b"a\nb\nc\n", b"x\ny\n", "up.en", "up.de")


def test_parallel_line_count_mismatch_says_from_which_line() -> None:
    with pytest.raises(CorpusError, match=r"from line 3 on, up\.en has lines with no partner in up\.de"):
        parallel_from_bytes(b"a\nb\nc\n", b"x\ny\n", "up.en", "up.de")
    with pytest.raises(CorpusError, match=r"from line 2 on, up\.de has lines with no partner in up\.en"):
        parallel_from_bytes(b"a\n", b"x\ny\nz\n", "up.en", "up.de")


def test_parallel_forgives_blank_lines_at_the_end() -> None:
    corpus = parallel_from_bytes(b"a\nb\n\n\n", b"x\ny\n", "up.en", "up.de")
    assert corpus.source == ("a", "b") and corpus.dropped == 0


def test_parallel_errors_name_the_bad_side() -> None:
    with pytest.raises(CorpusError, match=r"^up\.de is not valid UTF-8: line 2"):
        parallel_from_bytes(b"a\nb\n", b"x\n\xff\n", "up.en", "up.de")


def test_parallel_with_only_placeholders() -> None:
    with pytest.raises(CorpusError, match="no usable sentence pairs"):
        parallel_from_bytes(b"@@\n...\n", b"a\nb\n", "p.en", "p.de")


def test_tsv_reads_pairs_and_skips_blank_lines() -> None:
    corpus = tsv_from_bytes(b"A dog.\tEin Hund.\n\nTwo men.\t@@\nA cat.\tEine Katze.\n", "pairs.tsv")
    assert corpus.source == ("A dog.", "A cat.") and corpus.target == ("Ein Hund.", "Eine Katze.")
    assert corpus.dropped == 1


@pytest.mark.parametrize("bad_line", [b"no tab here", b"one\ttwo\tthree"])
def test_tsv_bad_line_is_named(bad_line: bytes) -> None:
    data = b"A dog.\tEin Hund.\n\n" + bad_line + b"\n"
    with pytest.raises(CorpusError, match=r"^pairs\.tsv line 3: expected exactly one TAB"):
        tsv_from_bytes(data, "pairs.tsv")


def test_read_files_from_disk(tmp_path: Path) -> None:
    (tmp_path / "s.en").write_bytes(b"A dog.\n")
    (tmp_path / "s.de").write_bytes(b"Ein Hund.\n")
    (tmp_path / "s.tsv").write_bytes(b"A dog.\tEin Hund.\n")
    assert read_parallel(tmp_path / "s.en", tmp_path / "s.de").preview() == [("A dog.", "Ein Hund.")]
    assert read_tsv(tmp_path / "s.tsv").preview() == [("A dog.", "Ein Hund.")]
    with pytest.raises(CorpusError, match=r"^missing\.de: file not found"):
        read_parallel(tmp_path / "s.en", tmp_path / "missing.de")


def test_read_sentences() -> None:
    assert read_sentences(b"  A dog.\n\nA cat. \n", "in.txt", max_bytes=100, max_lines=5) == ["A dog.", "A cat."]
    with pytest.raises(CorpusError, match=r"^in\.txt has 3 sentences; the limit is 2"):
        read_sentences(b"a\nb\nc\n", "in.txt", max_bytes=100, max_lines=2)
    with pytest.raises(CorpusError, match=r"^in\.txt is \d+ bytes; the limit is 4 bytes"):
        read_sentences(b"a\nb\nc\n", "in.txt", max_bytes=4, max_lines=10)


def test_explicit_root_without_files_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(DataUnavailableError, match=r"lacks val\.en, val\.de") as info:
        load_multi30k("val", root=tmp_path)
    assert str(tmp_path) in str(info.value)
    assert isinstance(info.value, CorpusError)


def test_unknown_split() -> None:
    with pytest.raises(ValueError, match="split"):
        load_multi30k("test2017", root=SHARED_MULTI30K)


@pytest.fixture(scope="module")
def multi30k_root() -> Path:
    if not (SHARED_MULTI30K / "train.de").is_file():
        pytest.skip(f"local Multi30k copy not found at {SHARED_MULTI30K}")
    return SHARED_MULTI30K


def test_shared_dir_is_found_relative_to_the_repo(multi30k_root: Path) -> None:
    assert shared_multi30k_dir() == multi30k_root


@pytest.mark.parametrize(("split", "pairs", "dropped"), [("train", 28998, 2), ("val", 1014, 0), ("test2016", 1000, 0)])
def test_multi30k_splits(multi30k_root: Path, split: str, pairs: int, dropped: int) -> None:
    corpus = load_multi30k(split, root=multi30k_root)
    assert (len(corpus), corpus.dropped) == (pairs, dropped)
    assert all(s and t for s, t in zip(corpus.source, corpus.target, strict=True))
    assert "@@" not in corpus.target


def test_multi30k_train_content(multi30k_root: Path) -> None:
    corpus = load_multi30k("train", root=multi30k_root)
    assert corpus.preview(1) == [
        (
            "Two young, White males are outside near many bushes.",
            "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
        )
    ]
    # train.de line 7366 holds a TAB inside the sentence; reading the two files keeps it whole.
    assert any("\t" in t for t in corpus.target)


def test_multi30k_default_search_uses_shared_copy(multi30k_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXPLORER_MULTI30K", raising=False)
    assert len(load_multi30k("val")) == 1014


# ------------------------------------------------------------------------- download path, without network
@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No configured folder and no shared copy; downloads go to an empty cache under tmp_path."""
    from explorer.data import multi30k

    monkeypatch.delenv("EXPLORER_MULTI30K", raising=False)
    monkeypatch.setattr(multi30k, "shared_multi30k_dir", lambda: tmp_path / "shared")
    monkeypatch.setattr(multi30k, "cache_multi30k_dir", lambda: tmp_path / "cache")
    return tmp_path


def test_offline_gives_data_unavailable(nowhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.error

    from explorer.data import multi30k

    def offline(url: str, timeout: float):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(multi30k.urllib.request, "urlopen", offline)
    assert not multi30k.multi30k_available()
    with pytest.raises(DataUnavailableError) as info:
        load_multi30k("val")
    message = str(info.value)
    assert str(nowhere / "shared") in message and str(nowhere / "cache") in message
    assert "EXPLORER_MULTI30K" in message and "val.en" in message
    assert not (nowhere / "cache").exists() or not any((nowhere / "cache").iterdir())


def test_download_writes_the_cache(nowhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip
    import io

    from explorer.data import multi30k

    urls = []

    def fake_urlopen(url: str, timeout: float):
        urls.append(url)
        word = "dog" if url.endswith(".en.gz") else "Hund"
        return io.BytesIO(gzip.compress("".join(f"{word} {i}\n" for i in range(1000)).encode()))

    monkeypatch.setattr(multi30k.urllib.request, "urlopen", fake_urlopen)
    corpus = load_multi30k("test2016")
    assert urls == [
        "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/test_2016_flickr.en.gz",
        "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/test_2016_flickr.de.gz",
    ]
    assert len(corpus) == 1000 and corpus.preview(1) == [("dog 0", "Hund 0")]
    assert sorted(p.name for p in (nowhere / "cache").iterdir()) == ["test2016.de", "test2016.en"]
    load_multi30k("test2016")  # now from the cache: no second download
    assert len(urls) == 2


# ------------------------------------------------------------------ streaming lines (explorer translate)
def test_iter_lines_keeps_every_line_and_accepts_bom_and_crlf() -> None:
    import io

    assert list(iter_lines(io.BytesIO(b"\xef\xbb\xbfa\r\n\n  \nb"), "in")) == ["a", "", "  ", "b"]
    assert list(iter_lines(io.BytesIO(b""), "in")) == []


@pytest.mark.parametrize(
    "data,message",
    [
        (b"ok\ncaf\xe9\n", r"^in is not valid UTF-8: line 2, byte 4 of that line \(byte 6 of the file, value 0xe9\)"),
        (b"\xef\xbb\xbfcaf\xe9", r"line 1, byte 7 of that line \(byte 6 of the file"),
        (b"ok\na\x00\x00\x01\x02b\n", r"^in line 2 looks like a binary file, not text \(4 of its 7 bytes"),
        (b"ok\n" + b"x" * 70 + b"\n", r"^in line 2 is longer than 64 bytes"),
    ],
)
def test_iter_lines_names_the_bad_line(data: bytes, message: str) -> None:
    import io

    lines = iter_lines(io.BytesIO(data), "in", max_line_bytes=64)
    if data.startswith(b"ok"):
        assert next(lines) == "ok"  # the lines before the bad one come through
    with pytest.raises(CorpusError, match=message):
        list(lines)


# ------------------------------------------------------------------ a corpus big enough to train on
def test_one_pair_is_too_few_to_train() -> None:
    from explorer.training.datasets import split_off_validation

    train, val = split_off_validation(tsv_from_bytes(b"a man\tein Mann\n@@\t@@\n", "one.tsv"))
    with pytest.raises(
        CorpusError,
        match=r"^one\.tsv has 1 usable sentence pair \(1 more had an empty or "
        r"placeholder side\); training needs at least 2",
    ):
        require_training_pairs(train, val)
    require_training_pairs(*split_off_validation(tsv_from_bytes(b"a\tb\nc\td\n", "two.tsv")))


def test_load_corpora_refuses_a_one_pair_file_before_any_model(tmp_path):
    # The Train page and `explorer train` both load through load_corpora: one pair cannot be split into a
    # pair to learn from and one to measure it, so it is refused with the file's name, not trained on.
    from explorer.data.corpus import CorpusError
    from explorer.training.datasets import load_corpora

    tsv = tmp_path / "one.tsv"
    tsv.write_text("A dog runs.\tEin Hund rennt.\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="1 usable sentence pair"):
        load_corpora(str(tsv))
