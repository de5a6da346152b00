"""`explorer export`: ship a run: average its last saves, store half precision, drop the optimizer."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.cli.arguments import non_negative_float, positive_int
from explorer.cli.errors import UsageError

if TYPE_CHECKING:
    from explorer.training.snapshots import AttentionSnapshot


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("export", help="ship a run: average its last saves, store half precision, no optimizer")
    p.add_argument("run", help="a run directory (with step-N/ saves) or a single checkpoint directory")
    p.add_argument("--to", required=True, help="target checkpoint directory, e.g. checkpoints/my-model")
    p.add_argument("--average", type=int, default=1, help="average the last N step-N/ saves (Section 6.1)")
    p.add_argument("--half", action="store_true", help="store float16 weights (loaded back as float32)")
    p.add_argument("--beam", type=positive_int, default=None, help="store this beam width as the model's default")
    p.add_argument(
        "--alpha", type=non_negative_float, default=None, help="store this length penalty α as the model's default"
    )
    return p


def _replay_of(
    run_dir: Path, training: dict[str, Any] | None
) -> tuple[int, dict[str, list[Any]], list[AttentionSnapshot]]:
    """The exported step, the training history up to it and the attention snapshots taken up to it: from the
    run folder when exporting a run, else from the checkpoint folder itself (a save made on the Train page)."""
    from explorer.training.snapshots import SnapshotError, load_snapshots

    step = int((training or {}).get("step", 0))
    history = (training or {}).get("history") or {}
    # `export RUN/latest` names a checkpoint inside a run: the run's snapshots sit one folder up.
    folders = [run_dir, run_dir.parent] if run_dir.name == "latest" or run_dir.name.startswith("step-") else [run_dir]
    try:
        found = next((shots for shots in map(load_snapshots, folders) if shots), [])
        snapshots = [s for s in found if s.step <= step]
    except SnapshotError:
        snapshots = []  # unreadable snapshots cost the replay, never the export
    return step, history, snapshots


def run(args: argparse.Namespace) -> int:
    import torch

    from explorer.checkpoint import average_weights, is_checkpoint, load_checkpoint, load_weights_into, save_checkpoint
    from explorer.training.snapshots import snapshot_files

    if (args.beam is None) != (args.alpha is None):
        raise UsageError("--beam and --alpha are stored together (the pair chosen on validation): give both or neither")
    run_dir = Path(args.run)
    saves = sorted(p for p in run_dir.glob("step-*") if is_checkpoint(p))
    sources = (
        saves[-args.average :]
        if args.average > 1 and saves
        else [run_dir if is_checkpoint(run_dir) else run_dir / "latest"]
    )
    checkpoint = load_checkpoint(sources[-1])
    if len(sources) > 1:
        load_weights_into(checkpoint.model, average_weights(sources))
    metadata = {
        **checkpoint.metadata,
        "exported_from": [str(p) for p in sources],
        "training": {k: v for k, v in (checkpoint.training or {}).items() if k != "history"},
    }
    if args.beam is not None:
        from explorer.checkpoint import decoding_settings

        metadata["decoding"] = {"beam": args.beam, "alpha": args.alpha}
        decoding_settings(metadata, "--beam/--alpha")  # the loader's own check, before anything is written
    step, history, snapshots = _replay_of(run_dir, checkpoint.training)
    save_checkpoint(
        args.to,
        checkpoint.model,
        checkpoint.tokenizer,
        metadata=metadata,
        # The loss curve and the attention snapshots (small) go with the model, so the Heads page can replay
        # its training; no optimizer state, so the export is not a run to resume.
        training={"step": step, "history": history} if history else None,
        extra_files=snapshot_files(snapshots) if snapshots else None,
        dtype=torch.float16 if args.half else None,
    )
    print(
        json.dumps(
            {"to": args.to, "averaged": [str(p) for p in sources], "half": args.half, "snapshots": len(snapshots)}
        )
    )
    return 0
