"""What the command line needs before torch is loaded: path queries and one-line errors.

Standard library only: ``python -m vecadd --cmakedir`` runs the package ``__init__`` first,
which asks :func:`running_as_path_query` whether to skip loading torch and vecadd._C.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

PATH_FLAGS = ("--cmakedir", "--includes")

# Exit statuses: argparse's for arguments that are wrong anywhere, another for this machine.
USAGE = 2
UNAVAILABLE = 1


class CommandLineError(Exception):
    """A mistake on the command line or a missing requirement, shown as one line on stderr."""

    def __init__(self, message: str, exit_status: int = USAGE) -> None:
        super().__init__(message)
        self.exit_status = exit_status


def asks_only_for_a_path(arguments: Sequence[str]) -> bool:
    """``--cmakedir`` or ``--includes`` alone: answered without torch or the compiled module."""
    return len(arguments) == 1 and arguments[0] in PATH_FLAGS


def running_as_path_query() -> bool:
    """True while ``python -m vecadd --cmakedir`` (or ``--includes``) imports the package.

    While the interpreter looks for the ``-m`` module it has imported so far, sys.argv[0] is
    "-m" (documented for ``-m``); the token before the arguments in sys.orig_argv names it.
    """
    argv, original = sys.argv, getattr(sys, "orig_argv", [])
    return (
        argv[:1] == ["-m"]
        and asks_only_for_a_path(argv[1:])
        and len(original) >= 3
        and original[-2] in ("vecadd", "-mvecadd")
    )
