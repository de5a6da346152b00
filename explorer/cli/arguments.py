"""Argument types and checks shared by the subcommands: bad values end as argparse's usage error (status 2)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from explorer.cli.errors import UsageError


def _whole_number(text: str, minimum: int, meaning: str = "") -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least {minimum}{meaning}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def every_n_steps(text: str) -> int:
    """--eval-every / --save-every: a whole number of steps, 0 meaning never (the trainer skips it)."""
    return _whole_number(text, 0, " (0: never)")


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of at least 0, got {text}")
    return value


def add_decoding_arguments(parser: argparse.ArgumentParser) -> None:
    """--beam and --alpha; left unset (None) so a checkpoint's own decoding defaults can fill them."""
    parser.add_argument(
        "--beam",
        type=positive_int,
        default=None,
        help=f"beam width (default: the checkpoint's decoding.beam, else {DEFAULT_BEAM})",
    )
    parser.add_argument(
        "--alpha",
        type=non_negative_float,
        default=None,
        help=f"length penalty α, Section 6.1 (default: the checkpoint's decoding.alpha, else {DEFAULT_ALPHA})",
    )


DEFAULT_BEAM, DEFAULT_ALPHA = 4, 0.6


def resolve_decoding(args: argparse.Namespace, metadata: dict[str, Any]) -> tuple[int, float]:
    """(beam, alpha): the flag when given, else the checkpoint's metadata["decoding"], else the defaults."""
    from explorer.checkpoint import MAX_BEAM, decoding_settings

    stored = decoding_settings(metadata)
    beam = args.beam if args.beam is not None else stored.beam if stored else DEFAULT_BEAM
    alpha = args.alpha if args.alpha is not None else stored.alpha if stored else DEFAULT_ALPHA
    if beam > MAX_BEAM:
        raise UsageError(f"--beam {beam} is more than {MAX_BEAM}; a wider beam only costs time (Section 6.1 uses 4)")
    return beam, alpha


def check_utf8_arguments(values: list[str], what: str) -> None:
    """Arguments the shell passed in another encoding arrive with surrogate escapes; say which one."""
    for number, value in enumerate(values, start=1):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                f"{what} {number} is not valid UTF-8; convert it (e.g. with `iconv -f latin1 -t utf-8`) "
                "or pass the text on standard input"
            ) from None
