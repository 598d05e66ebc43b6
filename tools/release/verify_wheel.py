"""A built wheel as a user gets it, as the workflow's verify job checks it (`nox -s verify`):
check_wheel.py (name, tag, torch requirement, a native binding per torch series it claims, a
CUDA library per toolkit of the matrix with its default architectures), then, beside each torch
of the matrix (or --torch VERSION:CUDA ...), in cached environments: pip installs it and changes
nothing else, it imports without a warning, runs the native binding of torch's series (with its
Python entries), loads the CUDA library of torch's CUDA major (none under a CPU-only torch) on
torch's own runtime, and passes vecadd check and the CPU test suite; then the same with the
stable binding forced (VECADD_BINDING=stable).

    python tools/release/verify_wheel.py WHEEL [--version V] [--torch VERSION:CUDA ...]
        [--cuda TOOLKIT[=LIST] ...] [--configured-index] [--work-dir DIR]

Needs cmake and nvidia-cuda-cuobjdump beside this Python (check_wheel.py's readers).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import wheel_matrix
from steps import (
    QUIET_TORCH_INSTALL,
    ROOT,
    TEST_TOOLS,
    UNCAPPED,
    StepFailed,
    Steps,
    add_work_dir,
    log,
    work_folder,
)

MATRIX = wheel_matrix.load_matrix()
BUILDS = wheel_matrix.load_builds()
BUILD_TORCH = MATRIX["build_torch"]
# The series a release's portable wheel holds native bindings for.
BINDING_SERIES = ",".join(wheel_matrix.series(t) for t in wheel_matrix.binding_torches(BUILDS))


def torch_environment(steps: Steps, build: str, configured_index: bool) -> Path:
    """A cached environment with torch build `build` (VERSION:CUDA) and the test tools,
    made once: each CUDA torch brings gigabytes of NVIDIA libraries."""
    version, cuda = wheel_matrix.parse_torch_build(build)
    path = steps.work / "torches" / f"{version}-{cuda}"
    python = path / "bin" / "python"
    if python.exists():
        return python
    shutil.rmtree(path, ignore_errors=True)
    steps.run(f"torch {build}: venv", [sys.executable, "-m", "venv", path])
    index = (
        [] if configured_index else ["--index-url", wheel_matrix.index_url(BUILDS, version, cuda)]
    )
    # Uncapped, here and for every later pip call in it: a pip.conf's torch cap would otherwise
    # refuse (or undo) a newer torch of the matrix.
    install = (*QUIET_TORCH_INSTALL, f"torch=={version}", *index)
    steps.pip(python, f"torch {build}: environment", *install, env=UNCAPPED)
    steps.pip(python, f"torch {build}: test tools", "install", "--quiet", *TEST_TOOLS, env=UNCAPPED)
    return python


def drop_environment(python: Path) -> None:
    """Frees the environment of `python`, which no later step uses: a CUDA torch's takes over
    5 GB, and the rehearsal's environments together come near what a CI machine's disk holds."""
    shutil.rmtree(python.parents[1], ignore_errors=True)


def packages(steps: Steps, python: Path, name: str) -> list[str]:
    frozen = steps.pip(python, name, "list", "--format=freeze", "--exclude", "vecadd", env=UNCAPPED)
    return sorted(line for line in frozen.splitlines() if "==" in line)


# The tests that tell one binding from another (the choice, autograd, errors, the operators'
# ways in), for a quicker run than the whole suite where time is short (the wheel rehearsal).
BINDING_TESTS = (
    "test_bindings.py",
    "test_autograd.py",
    "test_errors.py",
    "test_operators.py",
    "test_transforms.py",
)


def cpu_suite(
    steps: Steps,
    python: Path | str,
    name: str,
    env: dict[str, str] | None = None,
    only: tuple[str, ...] = (),
) -> None:
    """The test suite but its build tests (or the files `only` names) beside `python`'s vecadd,
    a worker per core (the CPU tests are independent); its closing line goes to the log."""
    where = [ROOT / "tests" / test for test in only] or [ROOT / "tests"]
    tests = [python, "-m", "pytest", *where, "-m", "not build", "-q"]
    tests += ["-p", "no:cacheprovider", "-n", "auto"]
    what = f"tests {' '.join(only)}" if only else "tests"
    ran = steps.run(f"{name}: {what} -m 'not build'", tests, cwd=steps.work, env=env)
    log("  " + ran.strip().splitlines()[-1])


FORCED_STABLE = {"VECADD_BINDING": "stable"}


def check_binding(
    steps: Steps, python: Path, name: str, suite: str, env: dict[str, str] | None = None
) -> str:
    """check_installed.py (no warning, the binding expected, torch's CUDA library and runtime),
    vecadd check and the CPU suite (`suite`: "full", "bindings" for BINDING_TESTS alone, or
    "none"); the binding that ran."""
    expect = ["--expect-binding", "stable"] if env == FORCED_STABLE else []
    shown = steps.run(
        f"{name}: no warning, the binding, torch's CUDA library and runtime (check_installed.py)",
        [python, Path(__file__).with_name("check_installed.py"), *expect],
        cwd=steps.work,
        env=env,
    )
    verdict = shown.strip().splitlines()[-1]
    log("  " + verdict)
    check = [python, "-m", "vecadd", "check"]
    steps.run(f"{name}: python -m vecadd check", check, cwd=steps.work, env=env)
    if suite != "none":
        cpu_suite(steps, python, name, env, BINDING_TESTS if suite == "bindings" else ())
    return "native" if "the native binding" in verdict else "stable"


def verify_installed(
    steps: Steps, name: str, wheel: Path, build: str, *, configured_index: bool, suite: str = "full"
) -> Path:
    """The wheel beside torch build `build`: pip installs it, with its dependencies, and changes
    nothing else; it imports without a warning, runs the binding expected for torch's series,
    loads the CUDA library of torch's CUDA major (none under a CPU-only torch) on torch's own
    runtime, passes vecadd check and the CPU test suite (`suite`, as check_binding takes it);
    where that was a native binding, all of it again with the stable binding forced. The
    environment's Python."""
    python = torch_environment(steps, build, configured_index)
    before = packages(steps, python, f"{name}: packages before")
    steps.pip(python, f"{name}: pip install the wheel", "install", "--quiet", wheel, env=UNCAPPED)
    after = packages(steps, python, f"{name}: packages after")
    steps.check(f"{name}: pip install changed no other package", sorted(set(before) ^ set(after)))
    reinstall = ("install", "--quiet", "--no-deps", "--force-reinstall", wheel)
    steps.pip(python, f"{name}: the wheel, fresh", *reinstall, env=UNCAPPED)
    if check_binding(steps, python, name, suite) == "native":
        check_binding(steps, python, f"{name}, VECADD_BINDING=stable", suite, FORCED_STABLE)
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    add_work_dir(parser, "build/nox/verify-work", "scratch folder, its torch environments kept")
    args = parser.parse_args(argv)
    steps = Steps(work_folder(args.work_dir))
    version = args.version or wheel_matrix.project_settings()["version"]
    builds = args.torch or [f"{e['torch']}:{e['cuda']}" for e in MATRIX["test_torch"]]
    cuda = args.cuda or MATRIX["cuda_libraries"]
    wheel = args.wheel.resolve()
    failure = None
    try:
        steps.tool(
            "the wheel's name, tag, requirement, native bindings and CUDA libraries",
            "check_wheel.py",
            *(wheel, "--abi", "stable", "--version", version),
            *("--torch", BUILD_TORCH, "--native-bindings", BINDING_SERIES),
            *(f"--cuda={c}" for c in cuda),
        )
        for build in builds:
            verify_installed(
                steps, f"torch {build}", wheel, build, configured_index=args.configured_index
            )
    except StepFailed as error:
        failure = str(error)
    return steps.conclude(failure, "verification")


if __name__ == "__main__":
    sys.exit(main())
