"""`explorer translate`: translate sentences given as arguments, or stdin one per line."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("translate", help="translate sentences (arguments, or stdin one per line)")
    p.add_argument("sentences", nargs="*")
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty α (Section 6.1)")
    p.add_argument("--n-best", type=int, default=1)
    p.add_argument("--json", action="store_true", help="one JSON object per line with pieces and scores")
    p.add_argument("--device", default="cpu")
    return p


def run(args: argparse.Namespace) -> int:
    from explorer.checkpoint import load_checkpoint
    from explorer.devices import resolve_device
    from explorer.inference import translate

    sentences = args.sentences or [line.rstrip("\n") for line in sys.stdin]
    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        print("error: nothing to translate (give sentences as arguments or on stdin)", file=sys.stderr)
        return 2
    checkpoint = load_checkpoint(args.checkpoint, resolve_device(args.device))
    results = translate(checkpoint.model, checkpoint.tokenizer, sentences, beam_size=args.beam, alpha=args.alpha,
                        n_best=args.n_best)
    for t in results:
        if t.truncated:
            print(f"warning: input cut to {checkpoint.config.max_len} pieces: {t.source[:60]!r}", file=sys.stderr)
        if args.json:
            print(json.dumps({"source": t.source, "translation": t.output, "source_pieces": t.source_pieces,
                              "output_pieces": t.target_output_pieces, "score": t.score, "log_prob": t.log_prob,
                              "finished": t.finished, "truncated": t.truncated,
                              "nbest": [{"translation": checkpoint.tokenizer.decode(h.tokens), "score": h.score,
                                         "log_prob": h.log_prob, "tokens": list(h.tokens)} for h in t.nbest]},
                             ensure_ascii=False))
        else:
            print(t.output)
    return 0
