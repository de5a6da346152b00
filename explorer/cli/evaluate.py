"""`explorer evaluate`: sacreBLEU and chrF of a checkpoint's translations, or of a hypotheses file."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from explorer.cli.arguments import add_decoding_arguments, positive_int, resolve_decoding
from explorer.cli.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("evaluate", help="sacreBLEU and chrF of a checkpoint (or of a hypotheses file)")
    p.add_argument("--checkpoint", "-c", help="translate --source with this checkpoint")
    p.add_argument("--source", help="source sentences, one per line")
    p.add_argument("--reference", required=True, help="reference translations, one per line")
    p.add_argument("--hypotheses", help="score this file instead of translating")
    add_decoding_arguments(p)
    p.add_argument("--limit", type=positive_int, default=None, help="only the first N sentences")
    p.add_argument("--output", help="write the translations here")
    p.add_argument("--device", default="cpu")
    return p


def _read_lines(path: str) -> list[str]:
    from explorer.data.corpus import decode_text

    return decode_text(Path(path).read_bytes(), path)


def run(args: argparse.Namespace) -> int:
    from explorer.evaluation import corpus_scores

    references = _read_lines(args.reference)[: args.limit]
    started = time.perf_counter()
    beam: int | None = None
    alpha: float | None = None
    if args.hypotheses:
        hypotheses = _read_lines(args.hypotheses)[: args.limit]
    else:
        if not (args.checkpoint and args.source):
            raise UsageError("give --checkpoint and --source, or --hypotheses")
        from explorer.checkpoint import load_checkpoint
        from explorer.devices import resolve_device
        from explorer.inference import translate

        sources = _read_lines(args.source)[: args.limit]
        if len(sources) != len(references):
            raise UsageError(f"{args.source} has {len(sources)} lines but {args.reference} has {len(references)}")
        checkpoint = load_checkpoint(args.checkpoint, resolve_device(args.device))
        beam, alpha = resolve_decoding(args, checkpoint.metadata)
        hypotheses = [
            t.output for t in translate(checkpoint.model, checkpoint.tokenizer, sources, beam_size=beam, alpha=alpha)
        ]
    if args.output:
        Path(args.output).write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    scores = corpus_scores(hypotheses, references)
    print(
        json.dumps(
            {**scores.as_dict(), "beam": beam, "alpha": alpha, "seconds": round(time.perf_counter() - started, 1)},
            indent=2,
        )
    )
    return 0
