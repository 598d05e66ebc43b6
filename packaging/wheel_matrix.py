"""The wheel matrix: .github/wheel-matrix.json turned into the jobs of .github/workflows/wheels.yml.

    python packaging/wheel_matrix.py matrix {pull_request,release} [--file FILE]
        print the build matrix as {"include": [...]}, one row per wheel
    python packaging/wheel_matrix.py version
        print the release number from pyproject.toml (the tag must be v + this)

Each cell names a CUDA toolkit, the torch built and tested against and its PyTorch index; the
architecture list is the build's default for that toolkit. Needs Python 3.11+ (tomllib).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from wheel_version import labelled_version, project_settings  # packaging/, beside this file

ROOT = Path(__file__).resolve().parents[1]
MATRIX_FILE = ROOT / ".github" / "wheel-matrix.json"
MATRIX_SETS = ("pull_request", "release")
CELL_KEYS = ("cuda", "torch", "index")


def load_matrix(path: Path = MATRIX_FILE) -> dict:
    return json.loads(Path(path).read_text())


def local_label(cuda: str | None) -> str:
    """'12.8' -> 'cu128'; None (a CPU-only build) -> 'cpu'."""
    if cuda is None:
        return "cpu"
    match = re.fullmatch(r"(\d+)\.(\d+)", cuda)
    if match is None:
        raise ValueError(f"cuda={cuda!r} is not a CUDA version; expected MAJOR.MINOR like '12.8'")
    return f"cu{match.group(1)}{match.group(2)}"


def cell_label(matrix: dict, cell: dict) -> str:
    """No label for the default cell (PyPI refuses local versions), cuXYZ for the others."""
    return "" if cell["cuda"] == matrix["default_cuda"] else local_label(cell["cuda"])


def python_tag(python: str) -> str:
    """'3.12' -> 'cp312'."""
    major, minor = python.split(".")
    return f"cp{major}{minor}"


def identifier(python: str, platform: str) -> str:
    """cibuildwheel's build identifier: '3.12' -> 'cp312-manylinux_x86_64'."""
    return f"{python_tag(python)}-{platform}"


def identifiers(matrix: dict) -> list[str]:
    return [identifier(python, matrix["platform"]) for python in matrix["python"]]


def matrix_rows(matrix: dict, which: str, release_version: str) -> list[dict]:
    """The jobs of the pull-request slice or of the full release set, one per wheel."""
    if which not in MATRIX_SETS:
        raise ValueError(f"matrix set must be one of {MATRIX_SETS}, not {which!r}")
    cells = {cell["cuda"]: cell for cell in matrix["cells"]}
    if which == "release":
        pairs = [(cuda, python) for cuda in cells for python in matrix["python"]]
    else:
        pairs = [(entry["cuda"], entry["python"]) for entry in matrix["pull_request"]]
    rows = []
    for cuda, python in pairs:
        cell = cells[cuda]
        label = cell_label(matrix, cell)
        channel = "pypi" if cuda == matrix["default_cuda"] else "release"
        rows.append(
            {
                **{key: cell[key] for key in CELL_KEYS},
                "label": label,
                "version": labelled_version(release_version, label),
                "python": python,
                "identifier": identifier(python, matrix["platform"]),
                "channel": channel,
                "artifact": f"wheel-{channel}-{local_label(cuda)}-{python_tag(python)}",
            }
        )
    return rows


def matrix_problems(matrix: dict) -> list[str]:
    """What is wrong with the matrix data (an empty list when nothing is)."""
    problems = [
        f"missing key {key!r}"
        for key in ("platform", "python", "default_cuda", "cells", "pull_request")
        if key not in matrix
    ]
    if problems:
        return problems
    seen = set()
    for cell in matrix["cells"]:
        cuda = cell.get("cuda")
        for key in CELL_KEYS:
            if not isinstance(cell.get(key), str) or not cell.get(key):
                problems.append(f"cell {cuda!r}: {key!r} must be a non-empty string")
        for key in sorted(set(cell) - set(CELL_KEYS)):
            problems.append(
                f"cell {cuda!r}: unknown key {key!r}; a cell has {', '.join(CELL_KEYS)} (the "
                "architecture list is the default of cmake/VecaddCudaArchitectures.cmake)"
            )
        if cuda in seen:
            problems.append(f"cell {cuda!r} appears twice")
        seen.add(cuda)
        if isinstance(cuda, str) and re.fullmatch(r"\d+\.\d+", cuda):
            expected_index = f"https://download.pytorch.org/whl/{local_label(cuda)}"
            if cell.get("index") != expected_index:
                problems.append(
                    f"cell {cuda}: index is {cell.get('index')!r}, expected {expected_index}"
                )
        else:
            problems.append(f"cell {cuda!r}: CUDA version must look like 12.8")
        if not re.fullmatch(r"\d+\.\d+\.\d+", str(cell.get("torch"))):
            problems.append(
                f"cell {cuda}: torch is {cell.get('torch')!r}, expected a release like 2.14.1"
            )
    if matrix["default_cuda"] not in seen:
        problems.append(f"default_cuda {matrix['default_cuda']!r} is not a cell")
    for python in matrix["python"]:
        if not re.fullmatch(r"3\.\d+", python):
            problems.append(f"Python version {python!r} must look like 3.12")
    for entry in matrix["pull_request"]:
        if entry.get("cuda") not in seen or entry.get("python") not in matrix["python"]:
            problems.append(f"pull_request entry {entry} is not in the release set")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="wheel matrix helpers")
    commands = parser.add_subparsers(dest="command", required=True)
    matrix = commands.add_parser("matrix", help="print the build matrix as JSON")
    matrix.add_argument("set", choices=MATRIX_SETS)
    matrix.add_argument("--file", type=Path, default=MATRIX_FILE)
    commands.add_parser("version", help="print the release number from pyproject.toml")
    args = parser.parse_args(argv)

    release_version = project_settings()["version"]
    if args.command == "version":
        print(release_version)
        return 0
    data = load_matrix(args.file)
    problems = matrix_problems(data)
    if problems:
        print("\n".join(f"{args.file}: {problem}" for problem in problems), file=sys.stderr)
        return 1
    rows = matrix_rows(data, args.set, release_version)
    print(json.dumps({"include": rows}, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
