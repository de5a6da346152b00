"""`explorer runs` (list the training runs of a runs folder, the app's by default) and `explorer stop RUN`.

Both read and write only the run folders (explorer.training.run_folder): the list is the same one the app's
Train page shows, a crashed run included, and a stop request from here stops a run the app started. The
command line is the machine's operator: it may act on every run, also where the app runs in shared mode (there
a browser session may act only on the runs it started).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from explorer.cli.errors import UsageError

RUNS_ENV = "EXPLORER_RUNS"


def default_root() -> Path:
    """The app's runs folder: $EXPLORER_RUNS, else runs/app/ in the repository (as ui/train/runs.py)."""
    return Path(os.environ.get(RUNS_ENV) or Path(__file__).resolve().parents[2] / "runs" / "app")


def _add_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=None, help="runs folder (default: $EXPLORER_RUNS or runs/app)")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("runs", help="list training runs: running, finished, stopped, crashed")
    _add_root(p)
    p.add_argument("--json", action="store_true", help="one JSON object per run")
    return p


def run(args: argparse.Namespace) -> int:
    from explorer.training.launcher import run_summary
    from explorer.training.run_folder import list_runs

    root = args.root or default_root()
    runs = list_runs(root)
    if args.json:
        for found in runs:
            print(json.dumps(run_summary(found), ensure_ascii=False))
        return 0
    if not runs:
        print(f"no training runs in {root}")
        return 0
    width = max(len(found.path.name) for found in runs)
    for found in runs:
        print(f"{found.path.name:<{width}}  {found.describe()}")
    return 0


class stop:  # noqa: N801 - a second subcommand in this module, registered like a module: `runs.stop`
    """`explorer stop RUN`: ask a training run to stop after its current step (it keeps its checkpoint)."""

    @staticmethod
    def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
        p = subparsers.add_parser("stop", help="stop a training run after its current step (it can be resumed)")
        p.add_argument("name", metavar="RUN", help="the run's name (see `explorer runs`)")
        _add_root(p)
        p.add_argument("--wait", action="store_true", help="wait until it has stopped and saved its checkpoint")
        return p

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        from explorer.training.launcher import CLI_OWNER, JobError, RunManager

        manager = RunManager(args.root or default_root())
        found = manager.status(args.name)
        if found is None:
            raise UsageError(f"no run named {args.name!r} in {manager.root}; `explorer runs` lists them")
        if not manager.stop(args.name, by=CLI_OWNER):
            print(f"{args.name} is not training ({found.describe()})")
            return 0
        print(f"asked {args.name} to stop after its current step")
        if args.wait:
            try:
                done = manager.wait(args.name)
                print(f"{args.name}: {done.status} at step {done.step:,}")
            except JobError as error:
                raise UsageError(str(error)) from None
        return 0
