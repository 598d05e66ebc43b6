"""scikit-build-core dynamic-metadata provider: the torch requirement of a wheel.

The requirement follows the build's flavour, chosen by the ``VECADD_TORCH_ABI`` environment
variable (``stable``, the default, or ``native``):

- stable: the operators use the LibTorch stable ABI with ``TORCH_TARGET_VERSION`` at
  ``STABLE_MINIMUM``, so the wheel loads under every torch from there on: ``torch>=2.10``.
- native: torch's full C++ API, which only loads under the torch minor series it was compiled
  with (builds run without isolation, against the user's torch): ``torch==X.Y.*``.

An sdist states the range its sources build against and marks Requires-Dist as Dynamic
(PEP 643), since a native wheel built from it pins whatever torch its builder has.

Usage: python cmake/torch_pin.py [--abi stable|native] [TORCH_VERSION]
       python cmake/torch_pin.py --stable-minimum
(prints the requirement; default flavour: the environment's; default torch: the importable one)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SERIES_MODULE = Path(__file__).resolve().parents[1] / "python" / "vecadd" / "_torch_series.py"
# The oldest torch whose stable ABI the stable operators are compiled against (CMake reads it
# from here through --stable-minimum and sets TORCH_TARGET_VERSION from it).
STABLE_MINIMUM = "2.10"
ABI_VARIABLE = "VECADD_TORCH_ABI"
ABIS = ("stable", "native")
# What an sdist (or metadata without torch) states: the range the sources build against.
SOURCE_REQUIREMENT = f"torch>={STABLE_MINIMUM}"


def _torch_series():
    # By file path: the rule lives in the runtime package, which cannot be imported here
    # (importing vecadd needs the compiled operators this build is making).
    spec = importlib.util.spec_from_file_location("vecadd_torch_series", SERIES_MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.torch_series


torch_series = _torch_series()


def build_abi(environ: Mapping[str, str] = os.environ) -> str:
    """The flavour a build makes: VECADD_TORCH_ABI, stable when unset."""
    abi = environ.get(ABI_VARIABLE, "") or "stable"
    if abi not in ABIS:
        raise ValueError(f"{ABI_VARIABLE}={abi!r}; expected one of {', '.join(ABIS)}")
    return abi


def torch_requirement(torch_version: str, abi: str = "native") -> str:
    """``2.14.1+cu130`` -> ``torch==2.14.*`` (native) or ``torch>=2.10`` (stable)."""
    if abi == "stable":
        return f"torch>={STABLE_MINIMUM}"
    return f"torch=={torch_series(torch_version)}.*"


# The build being made, reported by scikit-build-core before dynamic_metadata is called.
_build_state = "wheel"


def build_state(state: str) -> None:
    global _build_state
    _build_state = state


def dynamic_wheel(settings: Mapping[str, Any]) -> dict[str, bool]:
    # An sdist states the range its sources support; each wheel built from it states its own.
    return {"dependencies": True}


def requirement_for(state: str, abi: str | None = None) -> str:
    """The torch requirement of an sdist (the sources' range) or of a wheel."""
    if state == "sdist":
        return SOURCE_REQUIREMENT
    abi = abi or build_abi()
    if abi == "stable":
        return torch_requirement("", abi)
    try:
        import torch
    except ImportError:
        return SOURCE_REQUIREMENT
    return torch_requirement(torch.__version__, abi)


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    return {"dependencies": [requirement_for(_build_state)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the torch requirement of a wheel.")
    parser.add_argument("torch_version", nargs="?", help="default: the importable torch")
    parser.add_argument("--abi", choices=ABIS, help=f"default: ${ABI_VARIABLE}, else stable")
    parser.add_argument(
        "--stable-minimum", action="store_true", help="print the stable ABI's torch minimum"
    )
    args = parser.parse_args(argv)
    if args.stable_minimum:
        print(STABLE_MINIMUM)
        return 0
    try:
        abi = args.abi or build_abi()
        if args.torch_version is None:
            print(requirement_for("wheel", abi))
        else:
            print(torch_requirement(args.torch_version, abi))
    except ValueError as error:
        print(f"torch_pin.py: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
