"""Checks that the docs agree with the data they show, and that their links lead somewhere.

    python packaging/check_docs.py

- README.md's table of default architecture lists against cmake/VecaddCudaArchitectures.cmake
  (asked of CMake): each toolkit it names has the list it shows, and it names every row;
- the wheel tables of README.md and docs/wheels.md against .github/wheel-matrix.json, with each
  cell's architectures being its toolkit's default list;
- every relative Markdown link in README.md and docs/*.md, and every path in backquotes in
  README.md and docs/wheels.md under a top-level folder of the repository, exists.

Prints one line per problem and exits 1 if there is any. Needs Python 3.11+ and CMake.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

# packaging/, beside this file
from cuda_architectures import default_architectures, table_toolkits
from wheel_matrix import MATRIX_FILE, cell_label, load_matrix

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
WHEELS_DOC = ROOT / "docs" / "wheels.md"
EN_DASH = "\u2013"  # how the docs write ranges (3.10-3.14 with an en dash)


def split_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table(path: Path, header_start: str) -> list[dict[str, str]]:
    """The body rows, keyed by column title, of the Markdown table whose header line starts
    with header_start."""
    lines = path.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(header_start)]
    if len(starts) != 1:
        raise LookupError(f"{path.name}: {len(starts)} tables start with {header_start!r}")
    header = split_row(lines[starts[0]])
    rows = []
    for line in lines[starts[0] + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, split_row(line), strict=True)))
    return rows


def unquote(text: str) -> str:
    return text.replace("`", "").strip()


def column(row: dict[str, str], title_start: str) -> str:
    return next(value for title, value in row.items() if title.startswith(title_start))


def named_toolkits(text: str) -> list[str]:
    """'12.0 - 12.7' (en dash) -> 12.0 ... 12.7; '12.8, 12.9' -> both; '13.0 (x)' -> 13.0."""
    versions = []
    for part in re.sub(r"\(.*?\)", "", text).split(","):
        bounds = [b.strip() for b in re.split(f"[{EN_DASH}-]", part)]
        if len(bounds) == 2:
            (major, first), (_, last) = (map(int, b.split(".")) for b in bounds)
            versions += [f"{major}.{minor}" for minor in range(first, last + 1)]
        else:
            versions.append(bounds[0])
    return versions


def default_table_problems() -> list[str]:
    problems = []
    named = []
    for row in table(README, "| CUDA toolkit | default list |"):
        shown = unquote(row["default list"])
        for toolkit in named_toolkits(row["CUDA toolkit"]):
            named.append(toolkit)
            derived = default_architectures(toolkit)
            if shown != derived:
                problems.append(
                    f"README.md: default list for CUDA {toolkit} is {shown!r}, "
                    f"the table in cmake/ gives {derived!r}"
                )
    for toolkit in table_toolkits():
        if toolkit not in named:
            problems.append(f"README.md: the default-list table does not name CUDA {toolkit}")
    return problems


def series(version: str) -> str:
    """'2.14.1' -> '2.14'."""
    return ".".join(version.split(".")[:2])


def wheel_table_problems(path: Path, header_start: str, matrix: dict) -> list[str]:
    rows = table(path, header_start)
    cells = matrix["cells"]
    shown_cuda = [named_toolkits(row["CUDA"])[0] for row in rows]
    if shown_cuda != [cell["cuda"] for cell in cells]:
        return [
            f"{path.name}: the wheel table lists CUDA {shown_cuda}, "
            f"{MATRIX_FILE.name} has {[cell['cuda'] for cell in cells]}"
        ]
    problems = []
    pythons = f"{matrix['python'][0]}{EN_DASH}{matrix['python'][-1]}"
    for shown, cell in zip(rows, cells, strict=True):
        where = f"{path.name}: CUDA {cell['cuda']}"
        torch_column = column(shown, "torch")
        # The torch range a wheel is tested under: the series of the cell's oldest and newest.
        oldest, newest = series(cell["test_torch"][0]), series(cell["test_torch"][-1])
        wanted_range = f"{oldest}{EN_DASH}{newest}"
        shown_range = re.sub(r"\s", "", torch_column.split("(")[0]).replace("-", EN_DASH)
        if shown_range != wanted_range:
            problems.append(f"{where}: torch {shown_range!r}, the matrix tests {wanted_range}")
        platforms = ", ".join(p.removeprefix("manylinux_") for p in cell["platforms"])
        if "platforms" in shown and shown["platforms"] != platforms:
            problems.append(
                f"{where}: platforms {shown['platforms']!r}, the matrix has {platforms}"
            )
        index = "/".join(cell["index"].split("/")[-2:])
        if f"`{index}`" not in torch_column:
            problems.append(f"{where}: index {torch_column!r}, the matrix has {cell['index']}")
        archs = unquote(column(shown, "architectures"))
        derived = default_architectures(cell["cuda"])
        if archs != derived:
            problems.append(
                f"{where}: architectures {archs!r}, the default for that toolkit is {derived!r}"
            )
        if re.sub(r"\s", "", shown["Python"]).replace("-", EN_DASH) != pythons:
            problems.append(f"{where}: Python {shown['Python']!r}, the matrix has {pythons}")
        label = cell_label(matrix, cell)
        wanted = f"`X.Y.Z+{label}`" if label else "`X.Y.Z`"
        if not shown["version"].startswith(wanted):
            problems.append(f"{where}: version {shown['version']!r}, expected {wanted}")
        default = cell["cuda"] == matrix["default_cuda"]
        if "published to" in shown:
            if ("(default)" in shown["CUDA"]) != default:
                problems.append(f"{where}: '(default)' must mark {matrix['default_cuda']} alone")
            channel = "PyPI" if default else "GitHub release"
            if shown["published to"] != channel:
                problems.append(f"{where}: published to {shown['published to']!r}, not {channel}")
    return problems


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
QUOTED_PATH = re.compile(r"`([\w.-]+/[^`\s]*)`")


def tracked_folders() -> set[str]:
    """The repository's top-level folders that git tracks (build outputs are not docs' paths);
    every folder when this is not a git checkout."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        return {p.name for p in ROOT.iterdir() if p.is_dir()}
    return {line.split("/")[0] for line in listed.stdout.splitlines() if "/" in line}


def link_problems() -> list[str]:
    problems = []
    top_level = tracked_folders()
    for doc in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        targets = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:|#", t)]
        if doc in (README, WHEELS_DOC):
            for quoted in QUOTED_PATH.findall(text):
                path = quoted.split("::")[0]
                if path.split("/")[0] in top_level and not re.search(r"[*{}<>]|X\.Y", path):
                    targets.append(path)
        for target in targets:
            path = target.split("#")[0]
            if not ((doc.parent / path).exists() or (ROOT / path).exists()):
                problems.append(f"{doc.relative_to(ROOT)}: {target} does not exist")
    return problems


def main() -> int:
    matrix = load_matrix()
    problems = [
        *default_table_problems(),
        *wheel_table_problems(README, "| CUDA | torch (tested; index) | architectures", matrix),
        *wheel_table_problems(WHEELS_DOC, "| CUDA | torch (tested; index) | architectures", matrix),
        *link_problems(),
    ]
    for problem in problems:
        print(problem)
    checked = "README.md and docs/: tables agree with the matrix and cmake/, links exist"
    print(f"check_docs: {len(problems)} problems" if problems else f"check_docs: {checked}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
