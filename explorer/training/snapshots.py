"""Attention snapshots: the watched sentences' cross-attention at every evaluation, kept so a page can show
how a head formed during training.

A run directory, and every checkpoint the app saves, holds them as two files:
    attention_snapshots.npz   one float16 array per (step, sentence), shape (layers, heads, output, source);
                              read with allow_pickle=False, so opening a file from elsewhere runs no code
    attention_snapshots.json  the steps, sentences and token labels, naming each array by its key

`save_snapshots` writes the npz first and the JSON second, each atomically, so the JSON only ever names
arrays that are on disk, even when the process is killed between the two writes.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.training.callbacks import SampleTranslation

SNAPSHOT_NPZ, SNAPSHOT_JSON = "attention_snapshots.npz", "attention_snapshots.json"
SNAPSHOT_FORMAT = "attention-explorer-snapshots"
MAX_SNAPSHOTS = 120  # older snapshots are thinned out beyond this, the first and the newest always kept


class SnapshotError(ValueError):
    """Snapshot files that exist but cannot be read; the message names the folder and the cause."""


@dataclass(frozen=True)
class AttentionSnapshot:
    """The watched sentences' translations and cross-attention at one training step."""

    step: int
    samples: tuple[SampleTranslation, ...]  # sample.cross_attention: (layers, heads, output, source)


def snapshot_files(snapshots: Sequence[AttentionSnapshot]) -> dict[str, bytes]:
    """`attention_snapshots.npz` (float16 arrays) and `.json` (steps, sentences, token labels) as bytes."""
    arrays: dict[str, np.ndarray] = {}
    entries = []
    for snap in snapshots:
        samples = []
        for i, sample in enumerate(snap.samples):
            key = f"step{snap.step}_sentence{i}"
            arrays[key] = np.asarray(sample.cross_attention, dtype=np.float16)
            samples.append(
                {
                    "key": key,
                    "source": sample.source,
                    "output": sample.output,
                    "source_pieces": list(sample.source_pieces),
                    "output_pieces": list(sample.output_pieces),
                }
            )
        entries.append({"step": snap.step, "samples": samples})
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]  # numpy's stub reads a key as allow_pickle
    labels = {
        "format": SNAPSHOT_FORMAT,
        "version": 1,
        "attention": "cross-attention, array shape (layers, heads, output pieces, source pieces)",
        "snapshots": entries,
    }
    return {
        SNAPSHOT_NPZ: buffer.getvalue(),
        SNAPSHOT_JSON: (json.dumps(labels, ensure_ascii=False, indent=1) + "\n").encode("utf-8"),
    }


def save_snapshots(folder: str | Path, snapshots: Sequence[AttentionSnapshot]) -> None:
    """Write both snapshot files into `folder`, each atomically (npz first: the JSON only names saved arrays)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(snapshot_files(snapshots).items(), key=lambda item: item[0] != SNAPSHOT_NPZ):
        write_atomic(folder / name, data)


def load_snapshots(folder: str | Path) -> list[AttentionSnapshot]:
    """Snapshots saved in a run directory or checkpoint; [] when it has none. Never unpickles anything.

    Raises SnapshotError when the files are there but unreadable or of another format.
    """
    folder = Path(folder)
    if not (folder / SNAPSHOT_JSON).is_file() or not (folder / SNAPSHOT_NPZ).is_file():
        return []
    try:
        labels = json.loads((folder / SNAPSHOT_JSON).read_text(encoding="utf-8"))
        with np.load(folder / SNAPSHOT_NPZ, allow_pickle=False) as arrays:
            found = {key: arrays[key].astype(np.float32) for key in arrays.files}
    except (OSError, ValueError, json.JSONDecodeError) as error:
        raise SnapshotError(f"attention snapshots in {folder} cannot be read ({error})") from None
    if labels.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(f"{folder / SNAPSHOT_JSON} is not an attention-snapshot file")
    snapshots = []
    for entry in labels.get("snapshots", []):
        samples = tuple(
            SampleTranslation(
                s["source"], s["output"], list(s["source_pieces"]), list(s["output_pieces"]), found[s["key"]]
            )
            for s in entry["samples"]
            if s["key"] in found
        )
        snapshots.append(AttentionSnapshot(int(entry["step"]), samples))
    return snapshots


def thin_snapshots(snapshots: list[AttentionSnapshot], cap: int = MAX_SNAPSHOTS) -> list[AttentionSnapshot]:
    """At most `cap` snapshots: drop every second one of the older half until they fit (first and last kept).

    A long run evaluates thousands of times; thinning keeps the files small and the newest steps dense.
    """
    snapshots = list(snapshots)
    while len(snapshots) > cap:
        half = len(snapshots) // 2
        older = snapshots[:half]
        snapshots = older[::2] + snapshots[half:]
    return snapshots


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a synced temporary file and a rename: readers, and a process that is
    killed mid-write, see the old file or the new one, never half of one. (The run folder's files use it too.)"""
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
