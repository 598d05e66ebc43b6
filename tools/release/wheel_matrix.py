"""The wheel matrix: .github/wheel-matrix.json, checked against what PyTorch publishes
(tools/release/pytorch_cuda_builds.json) and turned into the jobs of .github/workflows/wheels.yml.

    python tools/release/wheel_matrix.py matrix {pull_request,release} [--file FILE]
        print the jobs as {"include": [...]}, one row per platform (one wheel each)
    python tools/release/wheel_matrix.py test-torch PLATFORM
        print the torches a wheel is tested under there, one VERSION:CUDA a line
    python tools/release/wheel_matrix.py index VERSION:CUDA [--platform PLATFORM]
        print the package index that serves that torch build
    python tools/release/wheel_matrix.py check [--file FILE] [--builds FILE]
        print the matrix's problems, if any (exit 1)
    python tools/release/wheel_matrix.py version
        print the release number from pyproject.toml (the tag must be v + this)
    python tools/release/wheel_matrix.py binding-torches
        print the torch releases the native bindings are compiled against, one a line

A test torch is VERSION:CUDA, with CUDA a toolkit like 13.2 or 'cpu' for the CPU-only build.
Needs Python 3.11+ (tomllib).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# cmake/ holds the build's metadata providers; it is no package (PyPI's cmake owns the name)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cmake"))
from torch_pin import STABLE_MINIMUM
from wheel_version import project_settings

ROOT = Path(__file__).resolve().parents[2]
MATRIX_FILE = ROOT / ".github" / "wheel-matrix.json"
BUILDS_FILE = Path(__file__).resolve().parent / "pytorch_cuda_builds.json"
MATRIX_SETS = ("pull_request", "release")
MATRIX_KEYS = ("python", "platforms", "pull_request", "build_torch", "cuda_libraries", "test_torch")
PLATFORMS = ("manylinux_x86_64", "manylinux_aarch64")
# GitHub's runner for each platform (cibuildwheel builds natively on both).
RUNNERS = {"manylinux_x86_64": "ubuntu-latest", "manylinux_aarch64": "ubuntu-24.04-arm"}
PYPI = "https://pypi.org/simple"
PYTORCH_INDEX = "https://download.pytorch.org/whl"
CPU = "cpu"


def load_matrix(path: Path = MATRIX_FILE) -> dict:
    return json.loads(Path(path).read_text())


def load_builds(path: Path = BUILDS_FILE) -> dict:
    return json.loads(Path(path).read_text())


def series(version: str) -> str:
    """'2.14.1' -> '2.14'."""
    return ".".join(version.split(".")[:2])


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def machine(platform: str) -> str:
    """'manylinux_aarch64' -> 'aarch64'."""
    return platform.removeprefix("manylinux_")


def local_label(cuda: str) -> str:
    """'12.8' -> 'cu128'; 'cpu' -> 'cpu'."""
    if cuda == CPU:
        return CPU
    match = re.fullmatch(r"(\d+)\.(\d+)", cuda)
    if match is None:
        raise ValueError(f"cuda={cuda!r} is not a CUDA version; expected MAJOR.MINOR like '12.8'")
    return f"cu{match.group(1)}{match.group(2)}"


def parse_torch_build(spec: str) -> tuple[str, str]:
    """'2.10.0:12.8' -> ('2.10.0', '12.8'); '2.15.0:cpu' -> ('2.15.0', 'cpu')."""
    version, sep, cuda = spec.partition(":")
    if (
        not sep
        or not re.fullmatch(r"\d+\.\d+\.\d+", version)
        or not (cuda == CPU or re.fullmatch(r"\d+\.\d+", cuda))
    ):
        raise ValueError(
            f"torch build {spec!r}; expected VERSION:CUDA like 2.10.0:12.8 or 2.15.0:cpu"
        )
    return version, cuda


def publication_problem(builds: dict, torch: str, cuda: str) -> str | None:
    """Why PyTorch does not publish torch `torch` for `cuda` ('cpu': CPU-only), per the table."""
    row = builds["series"].get(series(torch))
    if row is None:
        return f"the table of PyTorch builds has no torch {series(torch)} series"
    if torch not in row["releases"]:
        return f"the table lists torch {series(torch)} releases {row['releases']}, not {torch}"
    if cuda == CPU:
        return None if row["cpu"] else f"PyTorch publishes no CPU-only torch {torch}"
    if cuda not in row["cuda"]:
        return (
            f"PyTorch does not publish torch {torch} for CUDA {cuda} (the table lists CUDA "
            f"{', '.join(row['cuda'])} for {series(torch)})"
        )
    return None


def index_url(builds: dict, torch: str, cuda: str, platform: str = "manylinux_x86_64") -> str:
    """The package index of a torch build: PyPI where it is PyPI's build for the platform,
    else PyTorch's index for that CUDA (or CPU)."""
    if publication_problem(builds, torch, cuda) is not None:
        raise ValueError(publication_problem(builds, torch, cuda))
    if builds["series"][series(torch)]["pypi"].get(machine(platform)) == cuda:
        return PYPI
    return f"{PYTORCH_INDEX}/{local_label(cuda)}"


def pypi_cuda(builds: dict, torch: str, platform: str = "manylinux_x86_64") -> str:
    """The CUDA of PyPI's torch `torch` on the platform ('cpu' for its CPU-only wheel)."""
    return builds["series"][series(torch)]["pypi"][machine(platform)]


def python_tag(python: str) -> str:
    """'3.12' -> 'cp312'."""
    major, minor = python.split(".")
    return f"cp{major}{minor}"


def identifier(python: str, platform: str) -> str:
    """cibuildwheel's build identifier: '3.12' -> 'cp312-manylinux_x86_64'."""
    return f"{python_tag(python)}-{platform}"


def identifiers(matrix: dict) -> list[str]:
    """Every identifier the release set builds or tests, in cibuildwheel's order."""
    return [identifier(python, p) for python in matrix["python"] for p in matrix["platforms"]]


def claimed_series(builds: dict) -> list[str]:
    """The table's series from the stable minimum on, oldest first."""
    return sorted(
        (s for s in builds["series"] if version_key(s) >= version_key(STABLE_MINIMUM)),
        key=version_key,
    )


def binding_torches(builds: dict) -> list[str]:
    """The torch release each native binding of the portable wheel is compiled against: the
    first of each claimed series (a binding compiled against X.Y.0 uses nothing a later X.Y.Z
    lacks), oldest first."""
    return [builds["series"][s]["releases"][0] for s in claimed_series(builds)]


def library_problems(matrix: dict, builds: dict) -> list[str]:
    """A CUDA library per CUDA major that a claimed torch series is published for, each
    built with a toolkit no newer than the oldest runtime of its major it meets."""
    problems = []
    toolkits = matrix["cuda_libraries"]
    majors = [t.split(".")[0] for t in toolkits]
    if len(set(majors)) != len(majors):
        problems.append(f"cuda_libraries {toolkits} names a CUDA major twice; expected one each")
    published = [c for s in claimed_series(builds) for c in builds["series"][s]["cuda"]]
    for major in sorted({c.split(".")[0] for c in published}, key=int):
        runtimes = [c for c in published if c.split(".")[0] == major]
        oldest = min(runtimes, key=version_key)
        toolkit = next((t for t in toolkits if t.split(".")[0] == major), None)
        if toolkit is None:
            problems.append(
                f"PyTorch publishes CUDA {major} builds ({', '.join(sorted(set(runtimes)))}) "
                f"but cuda_libraries {toolkits} has no CUDA {major} toolkit"
            )
        elif version_key(toolkit) > version_key(oldest):
            problems.append(
                f"cuda_libraries builds CUDA {major} with {toolkit}, newer than the CUDA {oldest} "
                "runtime of torch builds it must load beside; expected at most " + oldest
            )
    return problems


def test_torch_problems(matrix: dict, builds: dict) -> list[str]:
    """Each test torch is a build PyTorch publishes, and the oldest claimed series, the
    newest series on the table and a CPU-only build are among them."""
    problems = []
    tested = []
    for entry in matrix["test_torch"]:
        torch, cuda = entry.get("torch", "?"), entry.get("cuda", "?")
        problem = publication_problem(builds, torch, cuda)
        if problem is not None:
            problems.append(f"test_torch {torch}:{cuda}: {problem}")
        tested.append((series(torch), cuda))
    claimed = claimed_series(builds)
    for wanted, what in (
        (claimed[0], "oldest series vecadd claims"),
        (claimed[-1], "newest series on the table"),
    ):
        if wanted not in {s for s, _ in tested}:
            problems.append(f"torch {wanted}, the {what}, is not tested (test_torch)")
    if not any(cuda == CPU for _, cuda in tested):
        problems.append("no CPU-only torch is tested (test_torch needs an entry with cuda 'cpu')")
    return problems


def matrix_problems(matrix: dict, builds: dict | None = None) -> list[str]:
    """What is wrong with the matrix data (an empty list when nothing is)."""
    builds = load_builds() if builds is None else builds
    problems = [f"missing key {key!r}" for key in MATRIX_KEYS if key not in matrix]
    problems += [
        f"unknown key {key!r}; expected {', '.join(MATRIX_KEYS)}"
        for key in sorted(set(matrix) - {*MATRIX_KEYS, "comment"})
    ]
    if problems:
        return problems
    for python in matrix["python"]:
        if not re.fullmatch(r"3\.\d+", python):
            problems.append(f"Python version {python!r} must look like 3.12")
    for platform in matrix["platforms"]:
        if platform not in PLATFORMS:
            problems.append(f"platform {platform!r}, expected one of {PLATFORMS}")
    for platform in matrix["pull_request"]:
        if platform not in matrix["platforms"]:
            problems.append(f"pull_request platform {platform!r} is not in platforms")
    build_torch = matrix["build_torch"]
    if publication_problem(builds, build_torch, pypi_cuda(builds, build_torch)) is not None or (
        version_key(build_torch) < version_key(STABLE_MINIMUM)
    ):
        problems.append(f"build_torch {build_torch!r} is not a PyPI build of a claimed series")
    for toolkit in matrix["cuda_libraries"]:
        if not re.fullmatch(r"\d+\.\d+", toolkit):
            problems.append(f"cuda_libraries entry {toolkit!r} must look like 12.6")
    if problems:
        return problems
    return [*library_problems(matrix, builds), *test_torch_problems(matrix, builds)]


def matrix_rows(matrix: dict, which: str, release_version: str) -> list[dict]:
    """The jobs of the pull-request slice or of the full release set, one per platform."""
    if which not in MATRIX_SETS:
        raise ValueError(f"matrix set must be one of {MATRIX_SETS}, not {which!r}")
    platforms = matrix["pull_request"] if which == "pull_request" else matrix["platforms"]
    toolkits = sorted(matrix["cuda_libraries"], key=version_key)
    rows = []
    for platform in platforms:
        arch = machine(platform)
        rows.append(
            {
                "platform": platform,
                "arch": arch,
                "runner": RUNNERS[platform],
                "python": matrix["python"][-1],
                "identifiers": " ".join(identifier(p, platform) for p in matrix["python"]),
                "build_torch": matrix["build_torch"],
                # The wheel build compiles the newest toolkit's library; the others come first.
                "cuda": toolkits[-1],
                "other_cuda": " ".join(toolkits[:-1]),
                "version": release_version,
                "artifact": f"wheel-{arch}",
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="wheel matrix helpers")
    commands = parser.add_subparsers(dest="command", required=True)
    matrix_command = commands.add_parser("matrix", help="print the jobs as JSON")
    matrix_command.add_argument("set", choices=MATRIX_SETS)
    test_torch = commands.add_parser("test-torch", help="print the test torches of a platform")
    test_torch.add_argument("platform", choices=PLATFORMS)
    index = commands.add_parser("index", help="print the index of a torch build")
    index.add_argument("build", metavar="VERSION:CUDA")
    index.add_argument("--platform", choices=PLATFORMS, default="manylinux_x86_64")
    check = commands.add_parser("check", help="print the matrix's problems")
    for command in (matrix_command, test_torch, check):
        command.add_argument("--file", type=Path, default=MATRIX_FILE)
    check.add_argument("--builds", type=Path, default=BUILDS_FILE)
    commands.add_parser("version", help="print the release number from pyproject.toml")
    commands.add_parser("binding-torches", help="print the native bindings' torch releases")
    args = parser.parse_args(argv)

    if args.command == "version":
        print(project_settings()["version"])
        return 0
    builds = load_builds(getattr(args, "builds", BUILDS_FILE))
    if args.command == "binding-torches":
        print("\n".join(binding_torches(builds)))
        return 0
    if args.command == "index":
        try:
            print(index_url(builds, *parse_torch_build(args.build), args.platform))
        except ValueError as error:
            print(f"wheel_matrix.py: {error}", file=sys.stderr)
            return 2
        return 0
    data = load_matrix(args.file)
    problems = matrix_problems(data, builds)
    if problems:
        print("\n".join(f"{args.file.name}: {problem}" for problem in problems), file=sys.stderr)
        return 1
    if args.command == "check":
        print(f"{args.file.name}: agrees with {BUILDS_FILE.name}")
    elif args.command == "test-torch":
        for entry in data["test_torch"]:
            print(f"{entry['torch']}:{entry['cuda']}")
    else:
        rows = matrix_rows(data, args.set, project_settings()["version"])
        print(json.dumps({"include": rows}, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
