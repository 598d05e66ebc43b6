"""scikit-build-core dynamic-metadata provider: pins torch to the series a wheel is built against.

A compiled extension only loads under the torch minor series it was compiled with, so the
wheel's Requires-Dist must say ``torch==X.Y.*`` for the torch that is importable at build
time (builds run without isolation, against the user's torch). An sdist states the range the
sources build against instead and marks Requires-Dist as Dynamic (PEP 643), since the wheels
built from it pin whatever torch their builder has.

Usage: python packaging/torch_pin.py [TORCH_VERSION]   (prints the requirement; default:
the importable torch's version)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SERIES_MODULE = Path(__file__).resolve().parents[1] / "python" / "vecadd" / "_torch_series.py"
# What an sdist (or metadata without torch) states: the range the sources support.
SOURCE_REQUIREMENT = "torch>=2.4"


def _torch_series():
    # By file path: the rule lives in the runtime package, which cannot be imported here
    # (importing vecadd needs the compiled module this build is making).
    spec = importlib.util.spec_from_file_location("vecadd_torch_series", SERIES_MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.torch_series


torch_series = _torch_series()


def torch_requirement(torch_version: str) -> str:
    """``2.14.1+cu130`` -> ``torch==2.14.*``."""
    return f"torch=={torch_series(torch_version)}.*"


# The build being made, reported by scikit-build-core before dynamic_metadata is called.
_build_state = "wheel"


def build_state(state: str) -> None:
    global _build_state
    _build_state = state


def dynamic_wheel(settings: Mapping[str, Any]) -> dict[str, bool]:
    # An sdist states the range its sources support; each wheel built from it pins its torch.
    return {"dependencies": True}


def requirement_for(state: str) -> str:
    """The torch requirement of an sdist (the sources' range) or of a wheel (the pin)."""
    if state == "sdist":
        return SOURCE_REQUIREMENT
    try:
        import torch
    except ImportError:
        return SOURCE_REQUIREMENT
    return torch_requirement(torch.__version__)


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    return {"dependencies": [requirement_for(_build_state)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the torch requirement of a wheel.")
    parser.add_argument("torch_version", nargs="?", help="default: the importable torch")
    args = parser.parse_args(argv)
    if args.torch_version is None:
        print(requirement_for("wheel"))
        return 0
    try:
        print(torch_requirement(args.torch_version))
    except ValueError as error:
        print(f"torch_pin.py: TORCH_VERSION: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
