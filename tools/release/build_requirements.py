"""What a --no-build-isolation build of vecadd needs besides torch, as pyproject.toml states it
([build-system] requires, and [tool.scikit-build]'s CMake and Ninja versions), one a line:

    python tools/release/build_requirements.py [--cpu-torch]

nox installs these before a build without isolation, as the release scripts do. With
--cpu-torch, first the CPU-only torch that the quick builds (nox's downstream session, the wheel
rehearsal's native wheel) are made against.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
CPU_TORCH = "2.13.0"  # CPU-only, and the development machines' disk has one: quick to install


def build_requirements() -> list[str]:
    settings = tomllib.loads(PYPROJECT.read_text())
    requires = [r for r in settings["build-system"]["requires"] if not r.startswith("torch")]
    scikit_build = settings["tool"]["scikit-build"]
    return [
        *requires,
        f"cmake{scikit_build['cmake']['version']}",
        f"ninja{scikit_build['ninja']['version']}",
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-torch", action="store_true", help=f"torch=={CPU_TORCH} first")
    torch = [f"torch=={CPU_TORCH}"] if parser.parse_args().cpu_torch else []
    print("\n".join([*torch, *build_requirements()]))
