"""`explorer` command line: one module per subcommand.

A subcommand module exposes `add_parser(subparsers) -> argparse.ArgumentParser` (adds its subparser and
returns it) and `run(args) -> int` (the exit status). It imports torch and the engine inside `run`, so that
`explorer --help` is instant and `_configure_runtime` runs before torch loads. Register it in `COMMANDS`.

Errors (see `explorer.cli.errors`): a mistake the user can fix ends with one line `error: ...` on stderr and
exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, cast

from explorer.cli import align, attribute, evaluate, export, heads, import_model, info, runs, train, translate
from explorer.cli.errors import run_guarded


def _configure_runtime() -> None:
    """Process-wide runtime settings (torch threads, OpenMP) chosen by the entry point, not the library.

    Owned by the performance work: fill in here. `main()` calls it first, before anything imports torch,
    because the OpenMP runtime reads its settings once, when torch loads.
    """
    from explorer.runtime import configure_for

    configure_for("cli")


# The subcommands, in the order `explorer --help` lists them.
COMMANDS = (train, runs, runs.stop, translate, evaluate, info, export, import_model, *heads.COMMANDS, attribute, align)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (and status 2) instead of the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # `explorer heads align` is the command `heads-align` (explorer/cli/align.py): `heads` has options of its own.
        return super().parse_known_args(align.route(sys.argv[1:] if args is None else args), namespace)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="explorer", description="Attention Explorer: a paper-faithful Transformer")
    # The subparsers are `_Parser`s (argparse makes them of the parent's class); the commands' `add_parser`
    # uses only ArgumentParser's API, which is the type they are written against.
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]", parser.add_subparsers(dest="command", required=True)
    )
    for command in COMMANDS:
        # Not `run`: export has a positional argument by that name.
        command.add_parser(sub).set_defaults(explorer_command=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _configure_runtime()
    args = build_parser().parse_args(argv)
    return run_guarded(args.explorer_command, args, debug=bool(os.environ.get("EXPLORER_DEBUG")))


if __name__ == "__main__":
    sys.exit(main())
