"""Investigation probes: standalone measurements behind the figures in benchmarks/JOURNAL.md, not part of
`python -m benchmarks`. Each runs as `python -m benchmarks.probes.NAME` and says what it measures with `--help`.

Importing this package sets nothing and loads neither torch nor the engine: several probes start children that
must not have either loaded (a CTranslate2 child, an older commit's engine), and each probe that times the engine
in its own process calls `benchmarks.command_line_runtime(__name__)` before torch loads.
"""

from __future__ import annotations

import argparse
import sys


def parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The probe's command line, its module docstring as the help text."""
    return argparse.ArgumentParser(
        prog=f"python -m {module}", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_rounds(p: argparse.ArgumentParser, default: int) -> None:
    p.add_argument("rounds", type=int, nargs="?", default=default, help=f"timed rounds (default {default})")


def add_sentences(p: argparse.ArgumentParser, default: int) -> None:
    p.add_argument(
        "sentences", type=int, nargs="?", default=default, help=f"Multi30k test2016 sentences (default {default})"
    )


def rounds_and_sentences(
    module: str, doc: str | None, rounds: int, sentences: int, child: tuple[str, ...] = ()
) -> argparse.Namespace:
    """The common command line: `[ROUNDS] [SENTENCES]` with these defaults, and for a probe that starts
    children of its own a hidden `--child` taking the names in `child`."""
    command = parser(module, doc)
    add_rounds(command, rounds)
    add_sentences(command, sentences)
    if child:
        command.add_argument("--child", nargs=len(child), metavar=child, help=argparse.SUPPRESS)
    return command.parse_args()


def child_command(module: str, *arguments: str) -> list[str]:
    """A probe's own child process: the same module with `--child` (run from the repository root)."""
    return [sys.executable, "-m", module, "--child", *arguments]
