"""What cmake/VecaddCudaArchitectures.cmake decides for a toolkit, asked of CMake itself.

    python tools/release/cuda_architectures.py [TOOLKIT]   (the default list; none: the toolkits)

Runs tools/release/cuda_architectures.cmake (``cmake -P``), so that the table has one reader:
CMake. Any CMake 3.20+ does; the one next to this Python comes first.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().with_name("cuda_architectures.cmake")


def cmake_executable() -> str:
    found = shutil.which("cmake", path=str(Path(sys.executable).parent)) or shutil.which("cmake")
    if found is None:
        raise RuntimeError("cmake is not on PATH (pip install cmake)")
    return found


def _ask(*defines: str) -> dict[str, list[str]]:
    ran = subprocess.run(
        [cmake_executable(), *defines, "-P", str(SCRIPT)], capture_output=True, text=True
    )
    if ran.returncode != 0:
        raise ValueError(" ".join(ran.stderr.split()))
    answers = {}
    for line in ran.stdout.splitlines():
        key, _, value = line.partition("=")
        answers[key] = value.split(";") if value else []
    return answers


def architecture_rules(toolkit: str) -> tuple[list[str], list[str]]:
    """(architectures the toolkit compiles, the default CMAKE_CUDA_ARCHITECTURES list)."""
    answers = _ask(f"-DCUDA_VERSION={toolkit}")
    return answers["supported"], answers["default"]


def default_architectures(toolkit: str) -> str:
    """The default list for a toolkit, in CMake's syntax: '75-real;...;120'."""
    return ";".join(architecture_rules(toolkit)[1])


def table_toolkits() -> list[str]:
    """The first toolkit version of each row of the table."""
    return _ask()["toolkits"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("toolkit", nargs="?", help="a CUDA version such as 12.8")
    toolkit = parser.parse_args().toolkit
    print(default_architectures(toolkit) if toolkit else ";".join(table_toolkits()))
