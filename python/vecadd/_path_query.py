"""The questions answered before torch is loaded: ``--cmakedir``, ``--includes``, ``--version``.

Standard library only: ``python -m vecadd --cmakedir`` and the ``vecadd`` console script run
the package ``__init__`` first, which asks :func:`running_as_path_query` whether to skip loading
torch and vecadd's libraries (downstream CMake asks these, and must not pay for torch).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

# Answered from files alone: paths for C++ builds, and the version.
PATH_FLAGS = ("--cmakedir", "--includes", "--version")


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


def path_answer(flag: str) -> str:
    """The answer to one of PATH_FLAGS, from files alone."""
    from ._build_config import VERSION
    from ._info import get_cmake_dir, get_include

    answers = {
        "--cmakedir": get_cmake_dir,
        "--includes": lambda: f"-I{get_include()}",
        "--version": lambda: f"vecadd {VERSION}",
    }
    return answers[flag]()
