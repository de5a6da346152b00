"""`explorer heads`, `explorer ablate`, `explorer importance`: what attention heads do, from the command line.

- `explorer heads -c CK` prints each head's role with its score and the evidence (explorer.analysis.roles);
- `explorer ablate -c CK --heads cross.2.0,enc.0.3` translates like `explorer translate` with those heads
  switched off (`--heads none` is exactly `explorer translate`);
- `explorer importance -c CK` writes the importance table (CSV and JSON) with a progress bar.

Heads are named FAMILY.LAYER.HEAD, 0-based, FAMILY one of enc, dec, cross; a wrong name ends with a message
listing the valid range and exit status 2 (HeadNameError is a ValueError, see explorer.cli.errors).
Register with `*heads.COMMANDS` in `explorer.cli.COMMANDS`.
"""

from __future__ import annotations

import argparse
import csv
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from explorer.cli.arguments import add_decoding_arguments, non_negative_float, positive_int
from explorer.cli.errors import UsageError, run_guarded

if TYPE_CHECKING:
    from explorer.model import HeadMask

ROLE_SENTENCES = 100


MEAN_SENTENCES = 100  # reference set for mean-ablation


def _head_mask(text: str, checkpoint: str) -> HeadMask:
    """Parse --heads against the checkpoint's config before any weights or input are read."""
    from explorer.checkpoint import read_config
    from explorer.model import HeadMask

    config, _ = read_config(checkpoint)
    return HeadMask.parse(text, config)


# ---- explorer heads ---------------------------------------------------------------------------------------
def add_heads_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("heads", help="each attention head's role (positional, alignment, …) with evidence")
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument("--input", "-i", help="sentences to measure on, one per line (default: validation sentences)")
    p.add_argument("--sentences", type=positive_int, default=ROLE_SENTENCES, help="how many sentences to use")
    p.add_argument("--level", choices=("word", "piece"), default="word")
    p.add_argument("--family", choices=("enc", "dec", "cross"), action="append", help="only these families")
    p.add_argument("--csv", action="store_true", help="CSV with every score instead of the table")
    return p


def _reference_sentences(args: argparse.Namespace, metadata: dict[str, Any]) -> list[str]:
    from explorer.analysis.importance import validation_pairs
    from explorer.data.corpus import iter_lines

    if args.input:
        with open(args.input, "rb") as stream:
            lines = [line for line in iter_lines(stream, args.input) if line.strip()]
        if not lines:
            raise UsageError(f"{args.input} holds no sentences")
        return lines[: args.sentences]
    try:
        return validation_pairs(metadata, args.sentences, 0)[0]
    except ValueError as error:
        raise UsageError(f"{error}; give sentences with --input") from None


def run_heads(args: argparse.Namespace) -> int:
    from explorer.analysis.roles import ROLE_RULES, measure_roles, roles_table
    from explorer.checkpoint import load_checkpoint

    loaded = load_checkpoint(args.checkpoint)
    sentences = _reference_sentences(args, loaded.metadata)
    roles = measure_roles(loaded.model, loaded.tokenizer, sentences, level=args.level)
    if args.family:
        roles = [r for r in roles if r.name.split(".")[0] in args.family]
    if args.csv:
        rows = roles_table(roles)
        columns = list(dict.fromkeys(key for row in rows for key in row))
        writer = csv.DictWriter(sys.stdout, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return 0
    print(f"head roles over {len(sentences)} sentences ({args.level} level)")
    print(f"{'head':<10} {'role':<15} {'score':>5}  evidence")
    for r in roles:
        evidence = ""
        if r.examples:
            evidence = "; ".join(f"{q} → {k}" for q, k, _ in r.examples[0].pairs[:3])
            evidence += f"   [{r.examples[0].sentence[:50]}]"
        print(f"{r.name:<10} {r.role:<15} {r.score:>5.2f}  {evidence}")
    print("\nroles: " + "; ".join(f"{role}: {rule}" for role, rule in ROLE_RULES.items()))
    return 0


# ---- explorer ablate --------------------------------------------------------------------------------------
def add_ablate_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("ablate", help="translate stdin with some attention heads switched off")
    p.add_argument("sentences", nargs="*", help="sentences to translate (default: read --input or stdin)")
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument(
        "--heads",
        required=True,
        help="heads to switch off, e.g. cross.2.0,enc.0.3 (FAMILY.LAYER.HEAD, 0-based), or none",
    )
    p.add_argument(
        "--mode",
        choices=("zero", "mean"),
        default="zero",
        help="zero: the head's output becomes 0 (Michel et al., 2019); mean: its mean output over "
        f"{MEAN_SENTENCES} validation sentences",
    )
    p.add_argument("--input", "-i", help="read sentences from this UTF-8 file, one per line ('-' for stdin)")
    add_decoding_arguments(p)
    p.add_argument("--batch-lines", type=positive_int, default=256, help=argparse.SUPPRESS)
    return p


def run_ablate(args: argparse.Namespace) -> int:
    from explorer.checkpoint import load_checkpoint
    from explorer.cli.arguments import resolve_decoding
    from explorer.cli.translate import _batches, _input_lines
    from explorer.inference import translate

    mask = _head_mask(args.heads, args.checkpoint)
    checkpoint = load_checkpoint(args.checkpoint)
    if args.mode == "mean" and not mask.is_empty:
        from explorer.analysis.importance import head_means, validation_pairs

        try:
            sources, references = validation_pairs(checkpoint.metadata, MEAN_SENTENCES, 0)
        except ValueError as error:
            raise UsageError(f"--mode mean: {error}") from None
        mask = mask.with_means(head_means(checkpoint.model, checkpoint.tokenizer, sources, references))
    beam, alpha = resolve_decoding(args, checkpoint.metadata)
    if not mask.is_empty:
        print(f"heads off: {', '.join(mask.off())}", file=sys.stderr)
    lines = 0
    for batch in _batches(_input_lines(args), args.batch_lines):
        wanted = [i for i, line in enumerate(batch) if line.strip()]
        done = (
            translate(
                checkpoint.model,
                checkpoint.tokenizer,
                [batch[i] for i in wanted],
                beam_size=beam,
                alpha=alpha,
                head_mask=mask,
            )
            if wanted
            else []
        )
        results = dict(zip(wanted, done, strict=True))
        for i in range(len(batch)):
            sys.stdout.write((results[i].output if i in results else "") + "\n")
        sys.stdout.flush()
        lines += len(batch)
    if lines == 0:
        raise UsageError("nothing to translate (give sentences as arguments, with --input, or on stdin)")
    return 0


# ---- explorer importance ----------------------------------------------------------------------------------
def add_importance_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("importance", help="head importance: BLEU without each head, gradient score, pruning")
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument("--sentences", type=positive_int, default=200, help="validation sentences (default 200)")
    p.add_argument("--seed", type=int, default=0, help="picks the sentences")
    p.add_argument("--beam", type=positive_int, default=1, help="beam width of the decodings (default greedy)")
    p.add_argument("--out", help="folder for head_importance.json/.csv (default: the cache, path printed)")
    p.add_argument("--no-pruning", action="store_true", help="skip the pruning curves (half the time)")
    p.add_argument("--top", type=non_negative_float, default=5, help="print this many most important heads")
    return p


def run_importance(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from explorer.analysis.importance import (
        ImportanceSettings,
        cache_path,
        checkpoint_hash,
        compute_importance,
        total_steps,
        validation_pairs,
    )
    from explorer.checkpoint import load_checkpoint

    loaded = load_checkpoint(args.checkpoint)
    settings = ImportanceSettings(args.sentences, args.seed, args.beam)
    try:
        sources, references = validation_pairs(loaded.metadata, settings.sentences, settings.seed)
    except ValueError as error:
        raise UsageError(str(error)) from None
    digest = checkpoint_hash(args.checkpoint)
    with tqdm(
        total=total_steps(loaded.config, not args.no_pruning),
        file=sys.stderr,
        unit=" runs",
        dynamic_ncols=True,
        disable=not sys.stderr.isatty(),
    ) as bar:

        def progress(done: int, total: int, what: str) -> None:
            bar.set_description(what)
            bar.update(done - bar.n)

        table = compute_importance(
            loaded.model,
            loaded.tokenizer,
            sources,
            references,
            settings=settings,
            checkpoint_hash=digest,
            prune=not args.no_pruning,
            progress=progress,
        )
    if args.out:
        json_path, csv_path = table.write(args.out)
    else:
        json_path = cache_path(digest, settings)
        json_path, csv_path = table.write(json_path.parent, json_path.stem)
    print(f"BLEU with every head: {table.baseline_bleu:.2f} on {len(sources)} sentences ({table.bleu_signature})")
    for h in table.ranked()[: int(args.top)]:
        print(
            f"  {h.name:<10} BLEU without it {h.bleu:6.2f} (drop {h.bleu_drop:+.2f}), "
            f"gradient importance {h.gradient_normalised:.3f}"
        )
    print(f"wrote {json_path} and {csv_path}")
    return 0


COMMANDS = (
    SimpleNamespace(add_parser=add_heads_parser, run=run_heads),
    SimpleNamespace(add_parser=add_ablate_parser, run=run_ablate),
    SimpleNamespace(add_parser=add_importance_parser, run=run_importance),
)


def main(argv: list[str] | None = None) -> int:
    """These three commands alone (tests; `python -m explorer.cli.heads`)."""
    import os

    parser = argparse.ArgumentParser(prog="explorer")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub).set_defaults(run=command.run)
    args = parser.parse_args(argv)
    return run_guarded(args.run, args, debug=bool(os.environ.get("EXPLORER_DEBUG")))


if __name__ == "__main__":
    sys.exit(main())
