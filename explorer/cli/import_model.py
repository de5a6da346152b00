"""`explorer import SOURCE --out DIR`: a Marian / OPUS-MT model (Hugging Face layout) as an explorer checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path

# Where the app's model picker lists checkpoints (ui/model_picker.py), so an import shows up there by default.
DEFAULT_ROOT = Path("checkpoints")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "import",
        help="import a Marian / OPUS-MT model (a local folder, or a hub id such as Helsinki-NLP/opus-mt-en-de)",
    )
    p.add_argument("source", help="a folder in the Hugging Face layout, or a hub id (downloaded when online)")
    p.add_argument("--out", "-o", type=Path, help="checkpoint folder to write (default: checkpoints/<model name>)")
    p.add_argument(
        "--target-language",
        metavar="CODE",
        help="for multi-target models: the language token put before sentences without one (kor -> >>kor<<)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    from explorer.checkpoint import load_checkpoint
    from explorer.marian.importer import import_marian

    out = args.out if args.out is not None else DEFAULT_ROOT / Path(str(args.source).rstrip("/")).name
    path = import_marian(args.source, out, target_language=args.target_language)
    checkpoint = load_checkpoint(path)  # what the app and `explorer translate` will do with it
    config = checkpoint.config
    print(
        f"imported {args.source} into {path}: {config.n_encoder_layers}+{config.n_decoder_layers} layers, "
        f"d_model {config.d_model}, {config.n_heads} heads, {config.vocab_size:,} pieces"
    )
    return 0
