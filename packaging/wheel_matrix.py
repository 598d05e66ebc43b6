"""The wheel matrix: .github/wheel-matrix.json turned into the jobs of .github/workflows/wheels.yml.

    python packaging/wheel_matrix.py matrix {pull_request,release} [--file FILE]
        print the build matrix as {"include": [...]}, one row per wheel
    python packaging/wheel_matrix.py version
        print the release number from pyproject.toml (the tag must be v + this)

Each cell names a CUDA toolkit, the torch built against, the torches tested under, its PyTorch
index and its platforms; the architecture list is the build's default for that toolkit. Each
row is one portable (py3-none) wheel: built under the oldest CPython, tested under the oldest
and newest. Needs Python 3.11+ (tomllib).
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
CELL_KEYS = ("cuda", "torch", "test_torch", "index", "platforms")
PLATFORMS = ("manylinux_x86_64", "manylinux_aarch64")
# GitHub's runner for each platform (cibuildwheel builds natively on both).
RUNNERS = {"manylinux_x86_64": "ubuntu-latest", "manylinux_aarch64": "ubuntu-24.04-arm"}


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
    """Every identifier the release set builds or tests, in cibuildwheel's order."""
    platforms = [p for p in PLATFORMS if any(p in cell["platforms"] for cell in matrix["cells"])]
    return [identifier(python, p) for python in matrix["python"] for p in platforms]


def matrix_rows(matrix: dict, which: str, release_version: str) -> list[dict]:
    """The jobs of the pull-request slice or of the full release set, one per wheel."""
    if which not in MATRIX_SETS:
        raise ValueError(f"matrix set must be one of {MATRIX_SETS}, not {which!r}")
    cells = {cell["cuda"]: cell for cell in matrix["cells"]}
    if which == "release":
        pairs = [(cuda, platform) for cuda in cells for platform in cells[cuda]["platforms"]]
    else:
        pairs = [(entry["cuda"], entry["platform"]) for entry in matrix["pull_request"]]
    rows = []
    for cuda, platform in pairs:
        cell = cells[cuda]
        label = cell_label(matrix, cell)
        channel = "pypi" if cuda == matrix["default_cuda"] else "release"
        arch = platform.removeprefix("manylinux_")
        rows.append(
            {
                "cuda": cuda,
                "torch": cell["torch"],
                "test_torch": " ".join(cell["test_torch"]),
                "index": cell["index"],
                "label": label,
                "version": labelled_version(release_version, label),
                "platform": platform,
                "arch": arch,
                "runner": RUNNERS[platform],
                "python": matrix["python"][-1],
                "identifiers": " ".join(identifier(p, platform) for p in matrix["python"]),
                "channel": channel,
                "artifact": f"wheel-{channel}-{local_label(cuda)}-{arch}",
            }
        )
    return rows


def matrix_problems(matrix: dict) -> list[str]:
    """What is wrong with the matrix data (an empty list when nothing is)."""
    problems = [
        f"missing key {key!r}"
        for key in ("python", "default_cuda", "cells", "pull_request")
        if key not in matrix
    ]
    if problems:
        return problems
    seen = set()
    release = re.compile(r"\d+\.\d+\.\d+")
    for cell in matrix["cells"]:
        cuda = cell.get("cuda")
        for key in sorted(set(CELL_KEYS) - set(cell)):
            problems.append(f"cell {cuda!r}: missing key {key!r}")
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
        if not release.fullmatch(str(cell.get("torch"))):
            problems.append(
                f"cell {cuda}: torch is {cell.get('torch')!r}, expected a release like 2.14.1"
            )
        tested = cell.get("test_torch", [])
        if (
            not isinstance(tested, list)
            or not tested
            or not all(release.fullmatch(str(t)) for t in tested)
        ):
            problems.append(f"cell {cuda}: test_torch must list releases like 2.10.0")
        elif cell.get("torch") not in tested:
            problems.append(f"cell {cuda}: the torch built against must be one it is tested under")
        platforms = cell.get("platforms", [])
        if not platforms or any(p not in PLATFORMS for p in platforms):
            problems.append(f"cell {cuda}: platforms {platforms!r}, expected some of {PLATFORMS}")
    if matrix["default_cuda"] not in seen:
        problems.append(f"default_cuda {matrix['default_cuda']!r} is not a cell")
    for python in matrix["python"]:
        if not re.fullmatch(r"3\.\d+", python):
            problems.append(f"Python version {python!r} must look like 3.12")
    cells = {cell.get("cuda"): cell for cell in matrix["cells"]}
    for entry in matrix["pull_request"]:
        cell = cells.get(entry.get("cuda"))
        if cell is None or entry.get("platform") not in cell.get("platforms", []):
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
