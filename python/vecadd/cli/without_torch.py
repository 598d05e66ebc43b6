"""What the command line needs before torch is loaded: light queries and one-line errors.

Standard library only: ``python -m vecadd --cmakedir`` and the ``vecadd`` console script run
the package ``__init__`` first, which asks :func:`running_as_path_query` whether to skip loading
torch and vecadd's libraries.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

# Answered from files alone: paths for C++ builds, and the version.
PATH_FLAGS = ("--cmakedir", "--includes", "--version")

# argparse's exit status for a command line it refuses; vecadd's own refusals (a bad value, or
# one this machine cannot serve, such as --device cuda without a GPU) give the same.
USAGE = 2


class CommandLineError(Exception):
    """A mistake on the command line or a missing requirement, shown as one line on stderr."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.exit_status = USAGE


def asks_only_for_a_path(arguments: Sequence[str]) -> bool:
    """``--cmakedir``, ``--includes`` or ``--version`` alone: answered without torch or the
    compiled libraries."""
    return len(arguments) == 1 and arguments[0] in PATH_FLAGS


def running_as_path_query() -> bool:
    """True while ``python -m vecadd --cmakedir`` or ``vecadd --cmakedir`` (or another of
    PATH_FLAGS) imports the package.

    While the interpreter looks for the ``-m`` module it has imported so far, sys.argv[0] is
    "-m" (documented for ``-m``); the token before the arguments in sys.orig_argv names it. The
    console script is a file the interpreter runs: sys.argv ends sys.orig_argv.
    """
    argv, original = sys.argv, getattr(sys, "orig_argv", [])
    if not asks_only_for_a_path(argv[1:]):
        return False
    if argv[:1] == ["-m"]:
        return len(original) >= 3 and original[-2] in ("vecadd", "-mvecadd")
    return Path(argv[0]).name == "vecadd" and original[-len(argv) :] == argv
