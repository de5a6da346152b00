"""`explorer heads align`: the alignment error rate of every cross-attention head (explorer/explain/alignment.py).

    explorer heads align -c CKPT --source FILE --reference FILE [--alignments FILE] [--json]

The attention is read teacher-forced on the reference translation; each head links every target word to the
source word it weighs most, scored against the alignments (Pharaoh lines, `i-j` sure, `i?j` possible) as read
and shifted by one. Without `--alignments`, the project's reference for Multi30k test2016
(explorer/explain/data/) is used, which fits only that test set's files.

`explorer heads` is a command of its own (explorer/cli/heads.py), with its own options, so `heads align` is
routed to the command `heads-align` before parsing (`route`); `explorer heads-align` works too.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from explorer.cli.errors import UsageError

NAME = "heads-align"


def route(argv: Sequence[str]) -> list[str]:
    """`heads align …` -> `heads-align …`; any other command line as it is."""
    words = list(argv)
    return [NAME, *words[2:]] if words[:2] == ["heads", "align"] else words


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser(NAME, prog="explorer heads align", description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument("--source", required=True, help="source sentences, one per line (e.g. test2016.en)")
    p.add_argument("--reference", required=True, help="their reference translations, one per line")
    p.add_argument("--alignments", help="reference word alignments, one line per pair (default: the project's)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--device", default="cpu")
    return p


def _lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def _result(scores: Any) -> dict[str, Any]:
    return {
        "shift": scores.shift,
        "sentences": scores.sentences,
        "skipped": scores.skipped,
        "heads": [
            {"head": f"cross.{layer}.{head}", "layer": layer, "index": head, "aer": round(value, 6)}
            for layer, head, value in scores.ranked()
        ],
        "layers": [{"layer": layer, "aer": round(float(v), 6)} for layer, v in enumerate(scores.layers)],
    }


def run(args: argparse.Namespace) -> int:
    from explorer.checkpoint import load_checkpoint
    from explorer.devices import resolve_device
    from explorer.explain.head_alignment import MULTI30K_TEST2016, align_heads, read_reference

    sources, targets = _lines(args.source), _lines(args.reference)
    alignments = args.alignments or str(MULTI30K_TEST2016)
    references = read_reference(alignments)
    if not (len(sources) == len(targets) == len(references)):
        hint = "" if args.alignments else "; the project's alignments fit Multi30k test2016 only: give --alignments"
        raise UsageError(
            f"{len(sources)} sources, {len(targets)} references and {len(references)} alignment lines{hint}"
        )
    checkpoint = load_checkpoint(args.checkpoint, resolve_device(args.device))
    results = [_result(s) for s in align_heads(checkpoint.model, checkpoint.tokenizer, sources, targets, references)]
    if args.json:
        print(json.dumps({"checkpoint": args.checkpoint, "alignments": alignments, "shifts": results}))
        return 0
    for result in results:
        print(f"shift {result['shift']:+d}: AER over {result['sentences']} pairs (skipped {result['skipped']})")
        for row in result["heads"]:
            print(f"  {row['head']:<10} {row['aer']:.3f}")
        print("  layer means: " + ", ".join(f"layer {r['layer']} {r['aer']:.3f}" for r in result["layers"]))
    return 0
