"""`explorer attribute`: which source pieces each output token owes its probability to, and which attention
agrees (explorer/explain/report.py).

For every output token of the sentence's translation: gradient × input and integrated gradients of the token's
log-probability with respect to the source embeddings (one value per source piece, the final </s> included),
and `delta`, the difference of outputs F(input) − F(baseline) the integrated gradients sum to
(`completeness_error`: by how much they miss it with --steps points). With `--json`, one object per sentence
and line, with `agreement`: Spearman's ρ between |attribution| and each cross-attention head, each layer's mean
(`head` null), the value-weighted cross-attention and the rollout (`layer` null), averaged over the tokens.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from explorer.cli.arguments import add_decoding_arguments, check_utf8_arguments, positive_int, resolve_decoding
from explorer.cli.errors import UsageError

MIN_STEPS = 2


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    from explorer.explain.attribution import IG_STEPS

    p = subparsers.add_parser(
        "attribute", help="attribution of each output token to the source (gradient × input, integrated gradients)"
    )
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument("--sentence", "-s", action="append", required=True, help="a source sentence (repeatable)")
    p.add_argument("--steps", type=positive_int, default=IG_STEPS, help="integrated-gradient steps")
    add_decoding_arguments(p)
    p.add_argument("--json", action="store_true", help="one JSON object per sentence")
    p.add_argument("--device", default="cpu")
    return p


def _print_table(result: dict[str, Any]) -> None:
    pieces = result["source_pieces"]
    print(f"{result['source']}\n  -> {result['translation']}   (integrated gradients, {result['n_steps']} steps)")
    for token in result["tokens"]:
        ig = token["integrated_gradients"]
        top = sorted(range(len(pieces)), key=lambda j: -abs(ig[j] or 0.0))[:3]
        strongest = ", ".join(f"{pieces[j]} {ig[j]:+.2f}" for j in top)
        print(
            f"  {token['piece']:<14} delta {token['delta']:+.3f}  (missed {token['completeness_error']:+.3f})  "
            f"{strongest}"
        )
    ranked = [r for r in result["agreement"] if r["rho"] is not None and r["method"] == "integrated_gradients"]
    print("  attention that agrees most with integrated gradients (mean Spearman ρ over tokens; heads 0-based):")
    for r in sorted(ranked, key=lambda r: -r["rho"])[:5]:
        where = (
            "rollout"
            if r["layer"] is None
            else f"cross.{r['layer']}." + ("mean" if r["head"] is None else str(r["head"]))
        )
        print(f"    {r['kind']:<15} {where:<14} ρ = {r['rho']:+.2f}")


def run(args: argparse.Namespace) -> int:
    from explorer.checkpoint import load_checkpoint
    from explorer.devices import resolve_device
    from explorer.explain.report import attribution_report, report_json
    from explorer.inference import translate

    check_utf8_arguments(args.sentence, "--sentence")
    if args.steps < MIN_STEPS:
        raise UsageError(f"--steps must be at least {MIN_STEPS}, got {args.steps}")
    sentences = [s.strip() for s in args.sentence]
    if not all(sentences):
        raise UsageError("--sentence is empty")
    checkpoint = load_checkpoint(args.checkpoint, resolve_device(args.device))
    beam, alpha = resolve_decoding(args, checkpoint.metadata)
    translations = translate(checkpoint.model, checkpoint.tokenizer, sentences, beam_size=beam, alpha=alpha)
    for translation in translations:
        result = report_json(translation, attribution_report(checkpoint.model, translation, n_steps=args.steps))
        if args.json:
            print(json.dumps(result, ensure_ascii=False), flush=True)
        else:
            _print_table(result)
    return 0
