"""How the command line ends on an error: one line on stderr and a status a script can act on.

- Status 2, `error: <what is wrong and how to fix it>`: the input, a file or a checkpoint is at fault
  (`UsageError`, the engine's `CheckpointError`/`CorpusError`, an OS error such as a missing file or a full disk,
  running out of memory). `ValueError` belongs here too: the engine's convention is a `ValueError` whose
  message names the bad argument, and the command line passes the user's values straight into it.
- Status 1, `internal error: ...`: anything else is a bug in this program, not in the user's input. It is
  still one line (a room full of students should not see a traceback), names the exception type so it can be
  reported, and `EXPLORER_DEBUG=1` re-raises it to show the traceback.
- Status 130 on Ctrl-C; a closed output pipe (`explorer translate ... | head`) ends quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable


class UsageError(Exception):
    """A mistake the user can fix; the message says what is wrong and what to do."""


def _expected_errors() -> tuple[type[BaseException], ...]:
    # Imported late: the engine modules import torch, which must load after the runtime is configured.
    from explorer.checkpoint import CheckpointError
    from explorer.data.corpus import CorpusError

    return (UsageError, CheckpointError, CorpusError, ValueError, OSError, MemoryError)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__


def run_guarded(command: Callable[[argparse.Namespace], int], args: argparse.Namespace, *, debug: bool = False) -> int:
    """Run a subcommand; turn the errors above into one line on stderr and an exit status."""
    try:
        return command(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): not an error. Point stdout at /dev/null so the interpreter's
        # final flush does not fail again on exit.
        with contextlib.suppress(OSError, ValueError):  # stdout is not a file (embedded use): nothing to flush
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        if isinstance(error, _expected_errors()):
            if isinstance(error, OSError) and error.filename is not None and error.strerror:
                print(f"error: {error.filename}: {error.strerror}", file=sys.stderr)
            elif isinstance(error, OSError) and error.strerror:  # the standard output, a pipe: no file name
                print(f"error: {error.strerror}", file=sys.stderr)
            elif isinstance(error, MemoryError):
                print("error: out of memory (try a smaller model, batch or input)", file=sys.stderr)
            else:
                print(f"error: {_one_line(error)}", file=sys.stderr)
            return 2
        if debug:
            raise
        print(
            f"internal error: {type(error).__name__}: {_one_line(error)} (this is a bug; run again with "
            "EXPLORER_DEBUG=1 to see the traceback and report it)",
            file=sys.stderr,
        )
        return 1
