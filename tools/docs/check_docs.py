"""Checks that the docs agree with the data they show, and that their links lead somewhere.

    python tools/docs/check_docs.py

- docs/building.md's table of default architecture lists against cmake/VecaddCudaArchitectures.cmake
  (asked of CMake): each toolkit it names has the list it shows, and it names every row;
- the support tables of README.md and docs/wheels.md against .github/wheel-matrix.json and
  tools/release/pytorch_cuda_builds.json: a row per torch series with the CUDA builds PyTorch
  publishes and the torches the wheels are tested under; a row per CUDA library with its
  toolkit and that toolkit's default list;
- every relative Markdown link in README.md and docs/*.md, and every path in backquotes in
  README.md and docs/wheels.md under a top-level folder of the repository, exists.

Prints one line per problem and exits 1 if there is any. Needs Python 3.11+ and CMake.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

# The release tools read the wheel matrix and the architecture table
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "release"))
from cuda_architectures import default_architectures, table_toolkits
from wheel_matrix import CPU, claimed_series, load_builds, load_matrix, version_key

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
WHEELS_DOC = ROOT / "docs" / "wheels.md"
BUILDING_DOC = ROOT / "docs" / "building.md"
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
    for row in table(BUILDING_DOC, "| CUDA toolkit | default list |"):
        shown = unquote(row["default list"])
        for toolkit in named_toolkits(row["CUDA toolkit"]):
            named.append(toolkit)
            derived = default_architectures(toolkit)
            if shown != derived:
                problems.append(
                    f"building.md: default list for CUDA {toolkit} is {shown!r}, "
                    f"the table in cmake/ gives {derived!r}"
                )
    for toolkit in table_toolkits():
        if toolkit not in named:
            problems.append(f"building.md: the default-list table does not name CUDA {toolkit}")
    return problems


def torch_table_problems(path: Path, matrix: dict, builds: dict) -> list[str]:
    """A row per torch series vecadd claims: PyTorch's CUDA builds of it (PyPI's x86_64 one
    marked), whether a CPU-only build exists, and the torches of it the wheels are tested under."""
    rows = table(path, "| torch | CUDA builds PyTorch publishes |")
    claimed = claimed_series(builds)
    shown = [row["torch"] for row in rows]
    if shown != claimed:
        return [f"{path.name}: the torch table lists {shown}, the table of builds {claimed}"]
    problems = []
    for row, name in zip(rows, claimed, strict=True):
        entry = builds["series"][name]
        wanted = ", ".join(
            f"**{c}**" if c == entry["pypi"]["x86_64"] else c for c in entry["cuda"]
        ) + (", CPU" if entry["cpu"] else "")
        if row["CUDA builds PyTorch publishes"] != wanted:
            problems.append(
                f"{path.name}: torch {name}: builds {row['CUDA builds PyTorch publishes']!r}, "
                f"the table of builds gives {wanted!r}"
            )
        tested = [
            f"{e['torch']} ({'CPU' if e['cuda'] == CPU else 'CUDA ' + e['cuda']})"
            for e in matrix["test_torch"]
            if ".".join(e["torch"].split(".")[:2]) == name
        ]
        if row["tested"] != (", ".join(tested) or EN_DASH):
            problems.append(
                f"{path.name}: torch {name}: tested {row['tested']!r}, the matrix tests "
                f"{', '.join(tested) or 'none'}"
            )
    return problems


def library_table_problems(path: Path, matrix: dict) -> list[str]:
    """A row per CUDA library of the wheels: its folder, toolkit and default list."""
    rows = table(path, "| CUDA library | toolkit |")
    toolkits = sorted(matrix["cuda_libraries"], key=version_key)
    shown = [row["toolkit"] for row in rows]
    if shown != toolkits:
        return [f"{path.name}: the CUDA library table lists {shown}, the matrix {toolkits}"]
    problems = []
    for row, toolkit in zip(rows, toolkits, strict=True):
        folder = f"`lib/cuda{toolkit.split('.')[0]}`"
        if row["CUDA library"] != folder:
            problems.append(f"{path.name}: CUDA {toolkit}: {row['CUDA library']!r}, not {folder}")
        derived = default_architectures(toolkit)
        if unquote(row["architectures"]) != derived:
            problems.append(
                f"{path.name}: CUDA {toolkit}: architectures {row['architectures']!r}, the "
                f"default for that toolkit is {derived!r}"
            )
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
    matrix, builds = load_matrix(), load_builds()
    problems = [
        *default_table_problems(),
        *(p for doc in (README, WHEELS_DOC) for p in torch_table_problems(doc, matrix, builds)),
        *(p for doc in (README, WHEELS_DOC) for p in library_table_problems(doc, matrix)),
        *link_problems(),
    ]
    for problem in problems:
        print(problem)
    checked = "README.md and docs/: tables agree with the matrix and cmake/, links exist"
    print(f"check_docs: {len(problems)} problems" if problems else f"check_docs: {checked}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
