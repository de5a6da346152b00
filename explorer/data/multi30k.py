"""Multi30k Task 1 English-German (Elliott et al. 2016): the default corpus, small enough to train on a CPU.

The raw (untokenized, original-case) files are looked for, in order:

1. the `root` argument, or else the folder in the environment variable EXPLORER_MULTI30K: when either is
   given it must hold the files (a wrong setting is an error, not a reason to download elsewhere);
2. `<repo>/../shared/data/multi30k`, found from this file, never from the current directory;
3. the user cache `~/.cache/attention-explorer/multi30k`.

If none holds the split, its two files are downloaded from github.com/multi30k/dataset into the cache.
Offline, `DataUnavailableError` says where we looked and how to provide the files.
"""

from __future__ import annotations

import gzip
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from explorer.data.corpus import CorpusError, ParallelCorpus, parallel_from_bytes

ENV_VAR = "EXPLORER_MULTI30K"
SPLITS = ("train", "val", "test2016")
LANGUAGES = ("en", "de")

# Upstream file stem of each split, and its line count (checked after a download, which catches truncated
# transfers and HTML error pages).
_UPSTREAM = {"train": "train", "val": "val", "test2016": "test_2016_flickr"}
_LINES = {"train": 29000, "val": 1014, "test2016": 1000}
_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{stem}.{lang}.gz"
_TIMEOUT_S = 30

_REPO_ROOT = Path(__file__).resolve().parents[2]


class DataUnavailableError(CorpusError):
    """Multi30k is neither on disk nor downloadable; the message says where to put the files."""


def shared_multi30k_dir() -> Path:
    """`<repo>/../shared/data/multi30k`, the copy kept next to the repository."""
    return _REPO_ROOT.parent / "shared" / "data" / "multi30k"


def cache_multi30k_dir() -> Path:
    """Where downloads go: `~/.cache/attention-explorer/multi30k`."""
    return Path.home() / ".cache" / "attention-explorer" / "multi30k"


def _files(root: Path, split: str) -> list[Path]:
    return [root / f"{split}.{lang}" for lang in LANGUAGES]


def _has_split(root: Path, split: str) -> bool:
    return all(path.is_file() for path in _files(root, split))


def _configured_root(root: str | Path | None) -> tuple[Path, str] | None:
    """The folder the caller or the environment insists on, with a phrase saying who chose it."""
    if root is not None:
        return Path(root).expanduser(), "the folder passed as root"
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser(), f"the folder in ${ENV_VAR}"
    return None


def default_multi30k_root() -> Path | None:
    """The first folder (EXPLORER_MULTI30K, shared copy, cache) that holds all three splits; no download."""
    configured = _configured_root(None)
    candidates = [configured[0]] if configured else [shared_multi30k_dir(), cache_multi30k_dir()]
    for folder in candidates:
        if all(_has_split(folder, split) for split in SPLITS):
            return folder
    return None


def multi30k_available() -> bool:
    """Whether Multi30k can be loaded without a download."""
    return default_multi30k_root() is not None


def load_multi30k(split: str, root: str | Path | None = None) -> ParallelCorpus:
    """The English->German pairs of `split` ("train", "val" or "test2016").

    Pairs with a placeholder side are dropped (train.de lines 16510 and 16664 are just "@@"), so train has
    28998 pairs and `dropped == 2`.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    configured = _configured_root(root)
    if configured is not None:
        folder, chosen_by = configured
        if not _has_split(folder, split):
            missing = ", ".join(p.name for p in _files(folder, split) if not p.is_file())
            raise DataUnavailableError(
                f"Multi30k {split}: {chosen_by} ({folder}) lacks {missing}. Put the raw Multi30k files "
                f"({split}.en and {split}.de, gunzipped from github.com/multi30k/dataset data/task1/raw) there"
                + (f", or unset ${ENV_VAR}." if root is None else ".")
            )
    else:
        found = next((f for f in (shared_multi30k_dir(), cache_multi30k_dir()) if _has_split(f, split)), None)
        folder = cache_multi30k_dir() if found is None else found
        if found is None:
            _download_split(split, folder)
    en_path, de_path = _files(folder, split)
    return parallel_from_bytes(
        en_path.read_bytes(), de_path.read_bytes(), en_path.name, de_path.name, name=f"Multi30k {split}"
    )


def _download_split(split: str, folder: Path) -> None:
    """Fetch `split.en` and `split.de` into `folder`; each file appears whole or not at all."""
    for lang in LANGUAGES:
        target = folder / f"{split}.{lang}"
        if target.is_file():
            continue
        url = _URL.format(stem=_UPSTREAM[split], lang=lang)
        try:
            with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
                text = gzip.decompress(response.read())
        except (urllib.error.URLError, OSError, EOFError) as err:  # offline, HTTP error, bad gzip
            raise DataUnavailableError(
                f"Multi30k {split}: no local copy and the download failed ({url}: {err}). Looked in "
                f"{shared_multi30k_dir()} and {cache_multi30k_dir()}. Provide the raw files "
                f"{split}.en and {split}.de (gunzipped from github.com/multi30k/dataset data/task1/raw) "
                f"in one of those folders, or point ${ENV_VAR} at a folder that holds them."
            ) from err
        lines = text.count(b"\n")
        if lines != _LINES[split]:
            raise DataUnavailableError(
                f"Multi30k {split}: downloaded {target.name} has {lines} lines, expected {_LINES[split]} "
                f"({url}); not saved."
            )
        folder.mkdir(parents=True, exist_ok=True)
        handle, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(text)
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
