"""`explorer info`: parameter counts (the paper's Table 3 side by side) or a checkpoint's card."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from explorer.cli.arguments import DEFAULT_ALPHA, DEFAULT_BEAM, positive_int
from explorer.config import PRESETS, count_parameters, preset


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("info", help="parameter counts (paper's Table 3 side by side) or a checkpoint's card")
    p.add_argument("--preset", default="base", choices=sorted(PRESETS))
    p.add_argument("--vocab", type=positive_int, default=37000)
    p.add_argument("--checkpoint", "-c", help="describe this checkpoint instead")
    p.add_argument("--json", action="store_true")
    return p


def run(args: argparse.Namespace) -> int:
    from explorer.paper import parameter_comparison

    if args.checkpoint:
        from explorer.checkpoint import check_weights_match, decoding_settings, read_config

        config, metadata = read_config(args.checkpoint)
        check_weights_match(Path(args.checkpoint), config)  # a card for weights that do not fit would mislead
        stored = decoding_settings(metadata)
        decoding = (
            {"beam": stored.beam, "alpha": stored.alpha, "from": "checkpoint"}
            if stored
            else {"beam": DEFAULT_BEAM, "alpha": DEFAULT_ALPHA, "from": "command-line defaults"}
        )
        if config.max_output_len is not None:  # an imported model's own limit; ours: input length + 50
            decoding["max_output_tokens"] = config.max_output_len
        info = {
            "checkpoint": args.checkpoint,
            "parameters": count_parameters(config),
            "config": config.to_dict(),
            "decoding": decoding,
            "metadata": metadata,
        }
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return 0
    config = preset(args.preset, vocab_size=args.vocab)
    counts = parameter_comparison(args.vocab)
    if args.json:
        print(
            json.dumps(
                {
                    "preset": args.preset,
                    "vocab_size": args.vocab,
                    "parameters": count_parameters(config),
                    "config": config.to_dict(),
                    "table3": [
                        {
                            "row": r.label,
                            "paper_millions": r.paper_millions,
                            "ours": ours,
                            "relative_error": round(error, 4),
                        }
                        for r, ours, error in counts
                    ],
                },
                indent=2,
            )
        )
        return 0
    print(f"preset {args.preset} (vocabulary {args.vocab}): {count_parameters(config):,} parameters\n")
    print(f"{'Table 3 row':<30}{'paper':>9}{'ours':>11}{'diff':>8}")
    for r, ours, error in counts:
        print(f"{r.label:<30}{r.paper_millions:>8}M{ours / 1e6:>10.1f}M{error * 100:>+7.1f}%")
    return 0
